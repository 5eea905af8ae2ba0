// Process-wide switch for the CUDA-event timing of kernel launches (telemetry's `ms`). On by
// default. Off: the engines record no events at all and every KernelRecord carries ms = 0;
// the NVTX ranges and the cost model stay. Used to measure what the telemetry itself costs
// (a run with timing on against the same run with it off). Plain C++: implemented in
// kernels/cuda/launch_timer.cu, or kernels/no_cuda/kernel_timing_no_cuda.cpp.
#pragma once

namespace tiersim {

void set_kernel_timing(bool on);
bool kernel_timing();

}  // namespace tiersim
