#include "kernels/device_info.hpp"
#include "sim/model.hpp"

namespace tiersim {

Strategy strategy_from_case(const Case& c) {
  Strategy s;
  s.backend = parse_backend(c.get_string("strategy.backend"), "strategy.backend");
  s.layout = parse_layout(c.get_string("strategy.layout"), "strategy.layout");
  s.precision = parse_precision(c.get_string("strategy.precision"), "strategy.precision");
  s.tiling = parse_tiling(c.get_string("strategy.tiling"), "strategy.tiling");
  s.coeffs = parse_coeffs(c.get_string("strategy.coeffs"), "strategy.coeffs");
  s.l2_persist = parse_l2_persist(c.get_string("strategy.l2_persist"), "strategy.l2_persist");
  s.l2_persist_bytes = static_cast<std::size_t>(c.get_int("strategy.l2_persist_bytes"));
  return s;
}

Backend resolve_backend(Backend requested, std::string* why) {
  if (requested != Backend::Auto) return requested;
  const DeviceInfo d = query_device();
  if (d.usable) {
    if (why) *why = "auto: using CUDA on " + d.name;
    return Backend::Cuda;
  }
  if (why) *why = "auto: using the CPU (" + d.why_not + ")";
  return Backend::Cpu;
}

}  // namespace tiersim
