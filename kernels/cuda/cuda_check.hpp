// Checked CUDA calls: every runtime call and every launch goes through these, and a failure
// becomes a tiersim::Error that names the call, where it was made, what it was doing (sizes)
// and CUDA's own message, e.g.
//   "cudaMalloc(&p, bytes) failed at device_buffer.hpp:40 (particles, 1.61 GB): out of memory".
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/error.hpp"

namespace tiersim::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line,
                                          const std::string& context) {
  std::string where = file;
  const auto slash = where.find_last_of('/');
  if (slash != std::string::npos) where = where.substr(slash + 1);
  std::string msg = std::string(call) + " failed at " + where + ":" + std::to_string(line);
  if (!context.empty()) msg += " (" + context + ")";
  msg += ": ";
  msg += cudaGetErrorName(err);
  msg += ": ";
  msg += cudaGetErrorString(err);
  // Reset the error CUDA keeps for cudaGetLastError (it stays only where the context is lost), so
  // that a caller who goes on after this Error (a benchmark skipping a shape that does not fit)
  // is not told of it again by the next launch's check.
  (void)cudaGetLastError();
  throw Error(msg);
}

inline void check(cudaError_t err, const char* call, const char* file, int line, const std::string& context = {}) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line, context);
}

}  // namespace tiersim::cuda

// TIERSIM_CUDA_CHECK(call) or TIERSIM_CUDA_CHECK(call, context-string).
#define TIERSIM_CUDA_CHECK(call, ...) \
  ::tiersim::cuda::check((call), #call, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__)

// After every kernel launch: a bad configuration shows up at once (cudaGetLastError); faults
// inside the kernel surface at the next synchronizing call, which is checked too.
#define TIERSIM_CUDA_CHECK_LAUNCH(kernel_name, context) \
  ::tiersim::cuda::check(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__, (context))
