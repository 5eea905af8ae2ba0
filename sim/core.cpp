#include "sim/core.hpp"

#include <array>
#include <cstdio>
#include <utility>

namespace tiersim {
namespace {

template <class E, std::size_t N>
E parse_enum(const std::string& s, const std::string& what,
             const std::array<std::pair<const char*, E>, N>& table) {
  std::string expected;
  for (const auto& [key, value] : table) {
    if (s == key) return value;
    if (!expected.empty()) expected += '|';  // appends, not "" + string: GCC 12 warns (-Wrestrict, bug 105329)
    expected += key;
  }
  throw Error(what + ": unknown value '" + s + "' (expected " + expected + ")");
}

constexpr std::array<std::pair<const char*, Backend>, 3> kBackends{
    {{"auto", Backend::Auto}, {"cpu", Backend::Cpu}, {"cuda", Backend::Cuda}}};
constexpr std::array<std::pair<const char*, Layout>, 4> kLayouts{
    {{"aos", Layout::AoS}, {"soa", Layout::SoA}, {"aosoa", Layout::AoSoA}, {"float4", Layout::Float4}}};
constexpr std::array<std::pair<const char*, Precision>, 2> kPrecisions{
    {{"fp32", Precision::Fp32}, {"fp64", Precision::Fp64}}};
constexpr std::array<std::pair<const char*, Tiling>, 2> kTilings{
    {{"none", Tiling::None}, {"shared", Tiling::Shared}}};
constexpr std::array<std::pair<const char*, CoeffSpace>, 2> kCoeffs{
    {{"constant", CoeffSpace::Constant}, {"global", CoeffSpace::Global}}};
constexpr std::array<std::pair<const char*, L2Persist>, 2> kL2{
    {{"off", L2Persist::Off}, {"on", L2Persist::On}}};

template <class E, std::size_t N>
const char* enum_name(E v, const std::array<std::pair<const char*, E>, N>& table) {
  for (const auto& [key, value] : table)
    if (value == v) return key;
  return "?";
}

}  // namespace

const char* name(Backend v) { return enum_name(v, kBackends); }
const char* name(Layout v) { return enum_name(v, kLayouts); }
const char* name(Precision v) { return enum_name(v, kPrecisions); }
const char* name(Tiling v) { return enum_name(v, kTilings); }
const char* name(CoeffSpace v) { return enum_name(v, kCoeffs); }
const char* name(L2Persist v) { return enum_name(v, kL2); }

Backend parse_backend(const std::string& s, const std::string& w) { return parse_enum(s, w, kBackends); }
Layout parse_layout(const std::string& s, const std::string& w) { return parse_enum(s, w, kLayouts); }
Precision parse_precision(const std::string& s, const std::string& w) { return parse_enum(s, w, kPrecisions); }
Tiling parse_tiling(const std::string& s, const std::string& w) { return parse_enum(s, w, kTilings); }
CoeffSpace parse_coeffs(const std::string& s, const std::string& w) { return parse_enum(s, w, kCoeffs); }
L2Persist parse_l2_persist(const std::string& s, const std::string& w) { return parse_enum(s, w, kL2); }

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 4) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

}  // namespace tiersim
