// Functions that run on both sides: TIERSIM_HD expands to __host__ __device__ under nvcc and to
// nothing elsewhere, so physics headers compile in plain C++ too. No CUDA headers here.
#pragma once

#if defined(__CUDACC__)
#define TIERSIM_HD __host__ __device__
#define TIERSIM_DEVICE_CODE 1
// Templates called with host-only and device-only accessors alike: nvcc checks each use.
#define TIERSIM_NO_HD_CHECK _Pragma("nv_exec_check_disable")
#else
#define TIERSIM_HD
#define TIERSIM_NO_HD_CHECK
#endif

// Loop unrolling in the device pass (nvcc's pragma) and in host code (GCC's, which the host pass
// of nvcc hands to the host compiler too).
#if defined(__CUDA_ARCH__)
#define TIERSIM_UNROLL _Pragma("unroll")
#else
#define TIERSIM_UNROLL _Pragma("GCC unroll 8")
#endif
