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
// Time only the launches of every n-th step (n >= 1; 1, the default: every step). The launches of
// the other steps record no events, and the run loop keeps no records of them: the events' cost
// (about 3 us per launch on the GPU) shrinks n-fold where steps are short.
void set_kernel_timing_every(std::int64_t n);
std::int64_t kernel_timing_every();
// Whether a launch stamped with `step` is timed: timing on and step a multiple of the interval.
bool kernel_timed_at(std::int64_t step);
// The time step the run loop is in: stamped on every kernel record at launch, so records read
// later (without waiting for the GPU) still land on their own step.
void set_telemetry_step(std::int64_t step);
std::int64_t telemetry_step();

}  // namespace tiersim
