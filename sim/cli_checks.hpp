// Checks of integer command-line options with one-line messages ("--sizes: must be >= 1, not 0"):
// CLI::PositiveNumber and CLI::NonNegativeNumber name their range up to the largest double, 300
// digits. A vector option is checked value by value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tiersim {

inline CLI::Validator at_least(long long min) {
  return CLI::Validator(
      [min](std::string& s) {
        long long v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "'" + s + "' is not an integer";
        return v < min ? "must be >= " + std::to_string(min) + ", not " + s : std::string();
      },
      ">= " + std::to_string(min));
}

}  // namespace tiersim
