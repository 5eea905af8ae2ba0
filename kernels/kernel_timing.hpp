// Process-wide switch for the CUDA-event timing of kernel launches (telemetry's `ms`). On by
// default. Off: the engines record no events at all and every KernelRecord carries ms = 0;
// the NVTX ranges and the cost model stay. Used to measure what the telemetry itself costs
// (a run with timing on against the same run with it off). Plain C++: implemented in
// kernels/cuda/launch_timer.cu, or kernels/no_cuda/kernel_timing_no_cuda.cpp.
#pragma once

#include <cstdint>

namespace tiersim {

void set_kernel_timing(bool on);
bool kernel_timing();
// The time step the run loop is in: stamped on every kernel record at launch, so records read
// later (without waiting for the GPU) still land on their own step.
void set_telemetry_step(std::int64_t step);
std::int64_t telemetry_step();

}  // namespace tiersim
