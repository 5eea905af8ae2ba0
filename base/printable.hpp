// Text from outside (a file's bytes, a path, a value from a case file) made safe to print in a
// one-line message: control characters, DEL and bytes that are not UTF-8 are written as \xNN (a
// newline as \n, a tab as \t), valid UTF-8 stays as it is, and long text is cut with "...".
#pragma once

#include <cstddef>
#include <string>

namespace tiersim {

std::string printable(const std::string& text, std::size_t max_chars = 120);

// A line of a file quoted in a message: 'its first characters' when it is text, or "(binary
// data)" when it holds a control character or bytes that are not UTF-8 (garbage is not echoed).
std::string quoted_excerpt(const std::string& line, std::size_t max_chars = 60);

}  // namespace tiersim
