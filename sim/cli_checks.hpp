// Checks of command-line options, with one-line messages: integers with a least value ("--sizes:
// must be >= 1, not 0"; CLI::PositiveNumber and CLI::NonNegativeNumber name their range up to the
// largest double, 300 digits), and the values of a strategy flag. A list option (std::vector) is
// checked value by value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "base/strategy.hpp"

namespace tiersim {

// empty_is_none: '' passes (a list option given '' is empty: `bench l2 --nbody-sizes ''`); else
// '' is refused, as CLI11 would take it as 0.
inline CLI::Validator at_least(long long min, bool empty_is_none = false) {
  return CLI::Validator(
      [min, empty_is_none](std::string& s) {
        if (s.empty() && empty_is_none) return std::string();
        long long v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "'" + s + "' is not an integer";
        return v < min ? "must be >= " + std::to_string(min) + ", not " + s : std::string();
      },
      ">= " + std::to_string(min));
}

// An option taking the values of strategy flag E that serve `models` (base/strategy.hpp): its help
// lists them and its check takes no other. A list option is comma-separated.
template <StrategyFlag E, class T>
CLI::Option* add_flag_values(CLI::App* app, const std::string& name, T& value, unsigned models = kBothModels) {
  const std::vector<std::string> names = flag_names<E>(models);
  std::string help;
  for (const auto& n : names) help += (help.empty() ? "" : ", ") + n;
  CLI::Option* opt = app->add_option(name, value, help)->check(CLI::IsMember(names))->capture_default_str();
  if constexpr (!std::is_same_v<T, std::string>) opt->delimiter(',');
  return opt;
}

}  // namespace tiersim
