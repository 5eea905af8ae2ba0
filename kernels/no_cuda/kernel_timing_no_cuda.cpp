// Built without CUDA: the kernel-timing switch has nothing to switch (CPU kernels are timed with
// the host clock), and no L2 persistence exists.
#include <atomic>

#include "kernels/kernel_timing.hpp"
#include "kernels/l2_window.hpp"
#include "sim/core.hpp"

namespace tiersim {

namespace {
std::atomic<bool> g_timing{true};
}

void set_kernel_timing(bool on) { g_timing.store(on); }
bool kernel_timing() { return g_timing.load(); }
namespace {
std::atomic<std::int64_t> g_step{-1};
}
void set_telemetry_step(std::int64_t step) { g_step.store(step); }
std::int64_t telemetry_step() { return g_step.load(); }

namespace {
std::atomic<StencilL2Target> g_target{StencilL2Target::Output};
}
void set_stencil_l2_target(StencilL2Target t) { g_target.store(t); }
void set_l2_miss_streaming(bool) {}
bool l2_miss_streaming() { return true; }
StencilL2Target stencil_l2_target() { return g_target.load(); }

L2Support l2_persistence_support() {
  L2Support s;
  s.why_not = "built without CUDA";
  return s;
}
L2ProbeState l2_probe() { return {}; }
double l2_read_probe_ms(std::size_t, int) { throw Error("l2_read_probe_ms: built without CUDA"); }
std::size_t l2_leave_persisting_lines(std::size_t, std::size_t) { throw Error("built without CUDA"); }
void l2_cleanup_after_control(std::size_t) {}

}  // namespace tiersim
