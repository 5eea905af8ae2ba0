// The device as tiersim sees it: limits read from cudaGetDeviceProperties (never hard-coded)
// and two measured ceilings: the device-to-device copy bandwidth of a float4 copy kernel, the
// peak every memory-bound kernel's GB/s is compared with, and the FMA throughput of a kernel
// with independent FMA chains, the compute roof of the roofline.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/device_info.hpp"

namespace tiersim {

bool cuda_compiled() { return true; }

void select_device(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return;  // query_device() says why
  }
  TIERSIM_CUDA_CHECK(cudaSetDevice(local_rank % count));
}

DeviceInfo query_device() {
  static std::once_flag once;
  static DeviceInfo cached;
  std::call_once(once, [] {
    DeviceInfo d;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      d.why_not = std::string("no CUDA device: ") + cudaGetErrorString(err);
      cached = d;
      return;
    }
    if (count == 0) {
      d.why_not = "no CUDA device: the driver reports 0 devices";
      cached = d;
      return;
    }
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) dev = 0;
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
      d.why_not = "cudaGetDeviceProperties failed";
      cached = d;
      return;
    }
    d.ordinal = dev;
    d.name = p.name;
    d.sm_count = p.multiProcessorCount;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.global_mem = p.totalGlobalMem;
    d.l2_bytes = std::size_t(p.l2CacheSize);
    d.persisting_l2_max = std::size_t(p.persistingL2CacheMaxSize);
    d.access_policy_window_max = std::size_t(p.accessPolicyMaxWindowSize);
    d.smem_optin_per_block = p.sharedMemPerBlockOptin;
    d.smem_per_sm = p.sharedMemPerMultiprocessor;
    int clk = 0;
    if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev) == cudaSuccess) d.clock_khz = clk;
    cudaDriverGetVersion(&d.driver_version);
    cudaRuntimeGetVersion(&d.runtime_version);
    std::size_t free_b = 0, total_b = 0;
    const cudaError_t merr = cudaMemGetInfo(&free_b, &total_b);
    if (merr != cudaSuccess) {
      (void)cudaGetLastError();
      d.why_not = std::string("CUDA device ") + p.name + " is not usable: " + cudaGetErrorString(merr);
      cached = d;
      return;
    }
    d.free_mem = free_b;
    if (p.major < 7) {
      d.why_not = "device " + d.name + " has compute capability " + std::to_string(p.major) + "." +
                  std::to_string(p.minor) + "; tiersim needs 7.0 or newer";
      cached = d;
      return;
    }
    d.usable = true;
    cached = d;
  });
  return cached;
}

namespace {

// Grid-stride float4 copy: 16-byte loads and stores, coalesced, several in flight per thread.
__global__ void copy_float4_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

__global__ void fill_float4_kernel(float4* dst, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float f = float(i % 1000003) * 1e-3f + 0.5f;  // not zeros
    dst[i] = make_float4(f, f + 1.f, f + 2.f, f + 3.f);
  }
}

// ~/.cache/tiersim/<what>_<device>_<driver>.txt
std::string cache_path(const DeviceInfo& d, const std::string& what) {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return {};
  std::string key = d.name + "_" + std::to_string(d.driver_version);
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return std::string(home) + "/.cache/tiersim/" + what + "_" + key + ".txt";
}

// A figure measured once per device and driver: from the cache unless remeasure, else measured
// and written there (failing to write a cache is not an error).
double cached_measurement(const std::string& what, bool remeasure, double (*measure)()) {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("no GPU: " + d.why_not);
  const std::string path = cache_path(d, what);
  if (!remeasure && !path.empty()) {
    std::ifstream f(path);
    double v = 0;
    if (f >> v && v > 0) return v;
  }
  const double v = measure();
  if (!path.empty()) {
    // Written under a name of this process's own and renamed over the cache: ranks measuring at
    // once never read half of another's file, and a link at the cache's name is replaced. (A
    // figure's best effort; io/safe_files.hpp, the layer beside this one, adds the fsync.)
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    bool written = false;
    {
      std::ofstream f(tmp);
      written = f && (f << v << "\n") && f.flush();
    }
    if (written) std::filesystem::rename(tmp, path, ec);
    if (!written || ec) std::filesystem::remove(tmp, ec);
  }
  return v;
}

// Median kernel time over reps after warm-up, ms (the launch callable enqueues one kernel).
template <class Launch>
double median_kernel_ms(Launch launch, const char* what, int warmup, int reps) {
  cudaEvent_t e0, e1;
  TIERSIM_CUDA_CHECK(cudaEventCreate(&e0));
  TIERSIM_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < warmup + reps; ++r) {
    TIERSIM_CUDA_CHECK(cudaEventRecord(e0));
    launch();
    TIERSIM_CUDA_CHECK(cudaGetLastError(), std::string("launch of ") + what);
    TIERSIM_CUDA_CHECK(cudaEventRecord(e1));
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= warmup) ms.push_back(t);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double measure_copy_now() {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("no GPU: " + d.why_not);
  // 1 GiB each way (2 GiB moved per copy), or less where the device is small.
  std::size_t bytes = std::size_t(1) << 30;
  while (bytes > (std::size_t(64) << 20) && 2 * bytes + (std::size_t(256) << 20) > d.free_mem) bytes /= 2;
  const std::size_t n = bytes / sizeof(float4);
  cuda::DeviceBuffer src(bytes, "copy-bandwidth source"), dst(bytes, "copy-bandwidth destination");
  const int block = 256;
  const int grid = d.sm_count * 8;
  fill_float4_kernel<<<grid, block>>>(src.as<float4>(), n);
  TIERSIM_CUDA_CHECK_LAUNCH("fill_float4_kernel", format_bytes(double(bytes)));
  const double med = median_kernel_ms(
      [&] { copy_float4_kernel<<<grid, block>>>(src.as<float4>(), dst.as<float4>(), n); }, "copy_float4_kernel", 2, 10);
  return 2.0 * double(bytes) / (med * 1e-3) * 1e-9;
}

double measure_link_now() {
  const std::size_t bytes = std::size_t(256) << 20;
  cuda::DeviceBuffer src(bytes, "link-bandwidth source");
  fill_float4_kernel<<<query_device().sm_count * 8, 256>>>(src.as<float4>(), bytes / sizeof(float4));
  TIERSIM_CUDA_CHECK_LAUNCH("fill_float4_kernel", format_bytes(double(bytes)));
  void* host = nullptr;
  TIERSIM_CUDA_CHECK(cudaMallocHost(&host, bytes), "pinned host buffer for the link bandwidth");
  double ms = 0;
  try {
    ms = median_kernel_ms([&] { TIERSIM_CUDA_CHECK(cudaMemcpyAsync(host, src.data(), bytes, cudaMemcpyDeviceToHost)); },
                          "cudaMemcpyAsync device to host", 1, 5);
  } catch (...) {
    cudaFreeHost(host);
    throw;
  }
  cudaFreeHost(host);
  return double(bytes) / (ms * 1e-3) * 1e-9;
}

// kChains independent FMA chains per thread (enough to hide the FMA latency at full occupancy),
// no memory traffic but one store per thread, so that nothing is optimised away.
constexpr int kChains = 8;
template <class T>
__global__ void fma_chains_kernel(T* out, int iters, T x, T y) {
  T a[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) a[k] = T(threadIdx.x + k);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kChains; ++k) a[k] = fma(a[k], x, y);
  }
  T s = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) s += a[k];
  out[std::size_t(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

template <class T>
double measure_fma_now() {
  const DeviceInfo d = query_device();
  const int block = 256, grid = d.sm_count * 8, iters = 1 << 10;
  cuda::DeviceBuffer out(std::size_t(grid) * block * sizeof(T), "FMA-throughput output");
  // x slightly below 1 and y small: the chains stay finite and are not constant-folded.
  const T x = T(0.999999), y = T(1e-6);
  const double ms = median_kernel_ms([&] { fma_chains_kernel<T><<<grid, block>>>(out.as<T>(), iters, x, y); },
                                     "fma_chains_kernel", 2, 5);
  const double flops = 2.0 * kChains * double(iters) * grid * block;
  return flops / (ms * 1e-3) * 1e-9;
}
}  // namespace

double measure_device_copy_gbs(bool remeasure) {
  static std::mutex mu;
  static double per_process = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (per_process > 0 && !remeasure) return per_process;
  return per_process = cached_measurement("copy_gbs", remeasure, measure_copy_now);
}

double measure_pinned_link_gbs(bool remeasure) {
  static std::mutex mu;
  static double per_process = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (per_process > 0 && !remeasure) return per_process;
  return per_process = cached_measurement("link_d2h_gbs", remeasure, measure_link_now);
}

double measure_device_fma_gflops(bool fp64, bool remeasure) {
  static std::mutex mu;
  static double per_process[2] = {0, 0};
  std::lock_guard<std::mutex> lock(mu);
  double& v = per_process[fp64 ? 1 : 0];
  if (v > 0 && !remeasure) return v;
  return v = fp64 ? cached_measurement("fma_gflops_fp64", remeasure, measure_fma_now<double>)
                  : cached_measurement("fma_gflops_fp32", remeasure, measure_fma_now<float>);
}

}  // namespace tiersim
