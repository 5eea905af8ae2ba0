// What tiersim needs to know about the GPU, read from the device (never hard-coded), and the
// copy bandwidth and FMA throughput measured on it. Plain C++; implemented in kernels/cuda/device_info.cu, or as
// "no GPU" when built without CUDA.
#pragma once

#include <cstddef>
#include <string>

namespace tiersim {

struct DeviceInfo {
  bool usable = false;
  std::string why_not;  // when !usable: "built without CUDA", "no CUDA device: ..."
  std::string name;
  int ordinal = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t global_mem = 0, free_mem = 0;
  std::size_t l2_bytes = 0;
  std::size_t persisting_l2_max = 0;
  std::size_t access_policy_window_max = 0;
  std::size_t smem_optin_per_block = 0, smem_per_sm = 0;
  int clock_khz = 0;
  int driver_version = 0, runtime_version = 0;
};

DeviceInfo query_device();  // cached after the first call
// Where the sweeps' best shape differs between the two devices they ran on (both 132 SMs and
// 228 KB of shared memory per SM): the H200's memory (4.8 TB/s) needs more bytes in flight than
// the H100's (3.35 TB/s), so there the deeper pipelines (more rows per thread, the bulk-copy
// ring, fewer fused steps) win where on the H100 occupancy does. Of the properties the runtime
// reports, the L2 size tells them apart: 60 MB against 50 MB.
inline bool deep_memory(std::size_t l2_bytes) { return l2_bytes >= (std::size_t(56) << 20); }
// Several ranks on one node: rank `local_rank` takes GPU local_rank % (GPUs visible), so each
// rank has its own GPU while there are enough and ranks share them round-robin beyond. Call
// before anything touches the GPU; nothing without CUDA or without a GPU.
void select_device(int local_rank);
bool cuda_compiled();  // tiersim built with the CUDA backend
// Device-to-device copy bandwidth (read + write bytes) of a float4 copy kernel, GB/s.
// Measured once per process and cached in ~/.cache/tiersim unless remeasure is set.
double measure_device_copy_gbs(bool remeasure = false);
// Device-to-host copy bandwidth into pinned host memory (256 MiB, median of 5), GB/s: the link
// staged output crosses. Measured once per process and cached like the copy bandwidth.
double measure_pinned_link_gbs(bool remeasure = false);
// Host memory copy bandwidth (read + write bytes) with the OpenMP threads of this process, GB/s.
double measure_host_copy_gbs();

// Compute ceilings for the roofline: fused multiply-add throughput (2 flops each) of a kernel
// with many independent FMA chains per thread and no memory traffic, GFLOP/s, in fp32 or fp64.
// The device figure is measured once per process and cached beside the copy bandwidth; the host
// figure (OpenMP threads, this build's compiler flags) once per process.
double measure_device_fma_gflops(bool fp64, bool remeasure = false);
double measure_host_fma_gflops(bool fp64);

}  // namespace tiersim
