// The step stamped on kernel records (kernels/kernel_timing.hpp): one definition for every
// build, CUDA or not.
#include "kernels/kernel_timing.hpp"

#include <atomic>

namespace tiersim {

namespace {
std::atomic<std::int64_t> g_step{-1};
}  // namespace

void set_telemetry_step(std::int64_t step) { g_step.store(step, std::memory_order_relaxed); }
std::int64_t telemetry_step() { return g_step.load(std::memory_order_relaxed); }

}  // namespace tiersim
