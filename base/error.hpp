// One error type for everything the user can cause or see; main() prints what() on one line.
#pragma once

#include <stdexcept>
#include <string>

namespace tiersim {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Human-readable byte counts for messages ("1.61 GB").
std::string format_bytes(double bytes);

}  // namespace tiersim
