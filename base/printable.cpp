#include "base/printable.hpp"

#include <cstdio>

namespace tiersim {

std::string printable(const std::string& text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n; ++chars) {
    if (chars == max_chars) return out + "...";
    const unsigned char c = static_cast<unsigned char>(text[i]);
    // The length of a valid UTF-8 sequence starting here (0: not one).
    std::size_t len = c < 0x80                ? 1
                      : c >= 0xC2 && c < 0xE0 ? 2
                      : c >= 0xE0 && c < 0xF0 ? 3
                      : c >= 0xF0 && c < 0xF5 ? 4
                                              : 0;
    if (len > 1) {
      if (i + len > n) len = 0;
      for (std::size_t k = 1; len && k < len; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) len = 0;
      // Overlong forms and surrogates are not valid UTF-8 either.
      if (len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) len = 0;  // C1 controls
      if (len == 3) {
        const unsigned char d = static_cast<unsigned char>(text[i + 1]);
        if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0)) len = 0;
      } else if (len == 4) {
        const unsigned char d = static_cast<unsigned char>(text[i + 1]);
        if ((c == 0xF0 && d < 0x90) || (c == 0xF4 && d >= 0x90)) len = 0;
      }
    }
    if (len == 1 && c >= 0x20 && c != 0x7F) {
      out += char(c);
    } else if (len > 1) {
      out.append(text, i, len);
      i += len;
      continue;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
    ++i;
  }
  return out;
}

}  // namespace tiersim
