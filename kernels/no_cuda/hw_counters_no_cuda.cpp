// Hardware counters in a build without CUDA: none (kernels/hw_counters.hpp).
#include "kernels/hw_counters.hpp"
#include "base/error.hpp"

namespace tiersim {

std::unique_ptr<HardwareCounters> make_hardware_counters(std::string* why_not, std::size_t) {
  if (why_not) *why_not = "tiersim was built without CUDA";
  return nullptr;
}

double run_counter_probe_copy(std::size_t) { throw Error("no GPU: tiersim was built without CUDA"); }

}  // namespace tiersim
