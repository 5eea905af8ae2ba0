// libFuzzer target for the case-file parser and the --set override parser. Input: override
// lines, a line with "---", then the case text (without "---" the whole input is the case).
// Every input must end in a parsed case or a tiersim::Error: no crash, leak, UB or other exception.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/case.hpp"
#include "base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  std::string text = input;
  const auto sep = input.find("\n---\n");
  if (sep != std::string::npos) {
    text = input.substr(sep + 5);
    std::size_t pos = 0;
    const std::string head = input.substr(0, sep);
    while (pos <= head.size()) {
      const auto nl = head.find('\n', pos);
      overrides.push_back(head.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
  try {
    const tiersim::Case c = tiersim::Case::parse(text, "fuzz.toml", overrides);
    // A parsed case must reproduce itself through its effective text.
    // (The first line names the source file, which differs.)
    const std::string text1 = c.effective_toml();
    const tiersim::Case again = tiersim::Case::parse(text1, "effective.toml");
    const std::string text2 = again.effective_toml();
    if (text1.substr(text1.find('\n')) != text2.substr(text2.find('\n'))) __builtin_trap();
  } catch (const tiersim::Error&) {
  }
  return 0;
}
