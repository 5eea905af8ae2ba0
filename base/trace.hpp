// Named ranges for Nsight Systems and Nsight Compute (NVTX), with the same names as the
// telemetry rows: one range per step and one per kernel launch. No-ops in a build without CUDA.
#pragma once

namespace tiersim {

void trace_push(const char* name);  // kernels/cuda/nvtx_ranges.cpp, or kernels/no_cuda
void trace_pop();

class TraceRange {
 public:
  explicit TraceRange(const char* name) { trace_push(name); }
  ~TraceRange() { trace_pop(); }
  TraceRange(const TraceRange&) = delete;
  TraceRange& operator=(const TraceRange&) = delete;
};

}  // namespace tiersim
