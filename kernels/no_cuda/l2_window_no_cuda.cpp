// Built without CUDA: no L2 persistence exists; the window API answers so.
#include <atomic>

#include "kernels/l2_window.hpp"
#include "sim/core.hpp"

namespace tiersim {

namespace {
std::atomic<StencilL2Target> g_target{StencilL2Target::Auto};
}
void set_stencil_l2_target(StencilL2Target t) { g_target.store(t); }
void set_l2_miss_streaming(bool) {}
bool l2_miss_streaming() { return true; }
void set_l2_fill(double) {}
double l2_fill() { return kDefaultL2Fill; }
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
