// Text from outside (a file's bytes, a path, a value from a case file) made safe to print in a
// one-line message: control characters, DEL and bytes that are not UTF-8 are written as \xNN (a
// newline as \n, a tab as \t), valid UTF-8 stays as it is, and long text is cut with "...".
#pragma once

#include <cstddef>
#include <string>

namespace tiersim {

std::string printable(const std::string& text, std::size_t max_chars = 120);

}  // namespace tiersim
