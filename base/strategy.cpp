#include "base/strategy.hpp"

#include <type_traits>

namespace tiersim {

std::string strategy_label(const Strategy& s, ModelMask model) {
  const bool cpu = s.backend == Backend::Cpu;
  std::string label = name(s.backend);
  for_each_flag([&](auto flag, auto member) {
    using F = decltype(flag);
    if constexpr (std::is_same_v<F, Flag<Backend>>) return;
    if (!(F::models & model) || (cpu && !F::cpu_honours)) return;
    label += '/';
    label += name(s.*member);
  });
  return label;
}

}  // namespace tiersim
