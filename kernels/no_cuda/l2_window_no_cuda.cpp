// Built without CUDA: no L2 persistence exists; the window API answers so.
#include "kernels/l2_window.hpp"
#include "base/error.hpp"

namespace tiersim {

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
