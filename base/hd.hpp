// Functions that run on both sides: TIERSIM_HD expands to __host__ __device__ under nvcc and to
// nothing elsewhere, so physics headers compile in plain C++ too. No CUDA headers here.
#pragma once

#if defined(__CUDACC__)
#define TIERSIM_HD __host__ __device__
#define TIERSIM_DEVICE_CODE 1
#define TIERSIM_UNROLL _Pragma("unroll")
// Templates called with host-only and device-only accessors alike: nvcc checks each use.
#define TIERSIM_NO_HD_CHECK _Pragma("nv_exec_check_disable")
#else
#define TIERSIM_HD
#define TIERSIM_UNROLL _Pragma("GCC unroll 8")
#define TIERSIM_NO_HD_CHECK
#endif
