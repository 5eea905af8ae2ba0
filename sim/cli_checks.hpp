// Checks of integer command-line options with one-line messages ("--sizes: must be >= 1, not 0"):
// CLI::PositiveNumber and CLI::NonNegativeNumber name their range up to the largest double, 300
// digits. A vector option is checked value by value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

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

}  // namespace tiersim
