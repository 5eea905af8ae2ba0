#include "io/output_format.hpp"

#include <algorithm>
#include <cctype>

#include "base/error.hpp"
#include "base/printable.hpp"
#include "io/h5md_output.hpp"
#include "io/vtk_output.hpp"

namespace tiersim {

OutputFormats parse_formats(const std::string& list) {
  OutputFormats f{false, false};
  if (list.find_first_not_of(" \t") == std::string::npos)
    throw Error("--format: empty list (expected xdmf, vtk or xdmf,vtk)");
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item == "xdmf") {
      f.xdmf = true;
    } else if (item == "vtk") {
      if (!vtk_output_available())
        throw Error(
            "--format vtk: this tiersim was built without VTK (run scripts/setup, then configure and "
            "build again; the configure output says why VTK was not used); available: xdmf");
      f.vtk = true;
    } else {
      throw Error("--format: unknown format '" + item + "' (expected xdmf, vtk or xdmf,vtk)");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return f;
}

bool OwnedName::matches(const std::string& name_in) const {
  std::string name = name_in;
  if (name.size() > 4 && name.ends_with(".tmp")) name.resize(name.size() - 4);
  if (!numbered) return name == prefix;
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return false;
  const auto first = name.begin() + std::ptrdiff_t(prefix.size()), last = name.end() - std::ptrdiff_t(suffix.size());
  auto digits = [](auto a, auto b) { return a != b && std::all_of(a, b, [](char c) { return c >= '0' && c <= '9'; }); };
  if (infix.empty()) return digits(first, last);
  const auto mid = std::search(first, last, infix.begin(), infix.end());
  return mid != last && digits(first, mid) && digits(mid + std::ptrdiff_t(infix.size()), last);
}

std::vector<OwnedName> output_format_names() {
  std::vector<OwnedName> names = H5mdOutput::names();
  for (const OwnedName& n : VtkOutput::names()) names.push_back(n);
  return names;
}

}  // namespace tiersim
