// The process-wide kernel-timing switch and the step stamped on kernel records
// (kernels/kernel_timing.hpp): one definition for every build, CUDA or not.
#include "kernels/kernel_timing.hpp"

#include <atomic>

namespace tiersim {

namespace {
std::atomic<bool> g_timing{true};
std::atomic<std::int64_t> g_step{-1};
std::atomic<std::int64_t> g_every{1};
}  // namespace

void set_kernel_timing(bool on) { g_timing.store(on, std::memory_order_relaxed); }
bool kernel_timing() { return g_timing.load(std::memory_order_relaxed); }
void set_kernel_timing_every(std::int64_t n) { g_every.store(n < 1 ? 1 : n, std::memory_order_relaxed); }
std::int64_t kernel_timing_every() { return g_every.load(std::memory_order_relaxed); }
bool kernel_timed_at(std::int64_t step) { return kernel_timing() && step % kernel_timing_every() == 0; }
void set_telemetry_step(std::int64_t step) { g_step.store(step, std::memory_order_relaxed); }
std::int64_t telemetry_step() { return g_step.load(std::memory_order_relaxed); }

}  // namespace tiersim
