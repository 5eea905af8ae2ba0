#include <type_traits>

#include "kernels/device_info.hpp"
#include "sim/model.hpp"

namespace tiersim {

ModelMask model_of(const Case& c) { return c.get_string("run.model") == "nbody" ? kNbody : kStencil; }

Strategy strategy_from_case(const Case& c) {
  Strategy s;
  const std::string model = c.get_string("run.model");
  const ModelMask mask = model_of(c);
  for_each_flag([&](auto flag, auto member) {
    using E = std::remove_cvref_t<decltype(s.*member)>;
    const std::string key = std::string("strategy.") + decltype(flag)::key;
    s.*member = parse_flag<E>(c.get_string(key), key);
    if (!(value_models(s.*member) & mask))
      throw Error(key + " = \"" + name(s.*member) + "\" is a strategy of the " +
                  (mask == kNbody ? "stencil" : "N-body") + " model; this case is run.model = \"" + model + "\"");
  });
  s.l2_persist_bytes = static_cast<std::size_t>(c.get_int("strategy.l2_persist_bytes"));
  s.tuning.kernel_timing = c.get_bool("run.telemetry");
  s.tuning.timing_every = c.get_int("run.telemetry_every");
  return s;
}

Backend resolve_backend(Backend requested, std::string* why) {
  if (requested == Backend::Cpu) return requested;
  const DeviceInfo d = query_device();
  if (requested == Backend::Cuda) {
    if (!d.usable)
      throw Error("--backend cuda (strategy.backend): no usable GPU (" + d.why_not +
                  "); --backend cpu runs on the CPU");
    return requested;
  }
  if (d.usable) {
    if (why) *why = "auto: using CUDA on " + d.name;
    return Backend::Cuda;
  }
  if (why) *why = "auto: using the CPU (" + d.why_not + ")";
  return Backend::Cpu;
}

}  // namespace tiersim
