// Case keys of the stencil model: [grid], [stencil], and each listed equation's section from its
// traits (kernels/physics/equations.hpp, Eq::kKeys).
#include <algorithm>
#include <string>

#include "kernels/physics/equations.hpp"
#include "sim/case.hpp"

namespace tiersim {
namespace {

using T = KeySpec::Type;
constexpr double kBig = 1e308;

KeySpec::Type key_type(KeyKind k) {
  switch (k) {
    case KeyKind::Int:
      return T::Int;
    case KeyKind::Float:
      return T::Float;
    case KeyKind::String:
      return T::String;
    case KeyKind::Bool:
      return T::Bool;
  }
  throw Error("stencil keys: unknown key kind");
}

std::vector<std::string> split_choices(const char* choices) {
  std::vector<std::string> v;
  if (!choices) return v;
  std::string s = choices;
  for (std::size_t at = 0;;) {
    const std::size_t bar = s.find('|', at);
    v.push_back(s.substr(at, bar - at));
    if (bar == std::string::npos) return v;
    at = bar + 1;
  }
}

template <class Eq>
void append_equation_keys(std::vector<KeySpec>& k) {
  const typename Eq::Constants defaults{};
  for (const auto& e : Eq::kKeys) {
    if (e.constant && e.kind != KeyKind::Float)
      throw Error(std::string(e.key) + ": a key that sets a constant must be a float");
    const std::string def = e.constant ? toml_float(defaults.*e.constant) : std::string(e.default_value);
    k.push_back({e.key, key_type(e.kind), def, e.doc, e.min, e.max, e.min_exclusive, split_choices(e.choices)});
  }
}

// "heat, wave; gray-scott: gray_scott.boundary_u for U and ...": which value each equation's
// fixed boundaries hold.
std::string boundary_value_doc() {
  std::string plain, own;
  StencilEquations::for_each([&](auto eq) {
    using Eq = decltype(eq);
    if constexpr (Eq::kOwnBoundaryKeys == nullptr)
      plain += (plain.empty() ? "" : ", ") + std::string(Eq::kName);
    else
      own += std::string("; ") + Eq::kName + ": " + Eq::kOwnBoundaryKeys;
  });
  return "field value held on fixed boundaries (" + plain + own + ")";
}

}  // namespace

void append_stencil_keys(std::vector<KeySpec>& k) {
  const std::vector<KeySpec> keys = {
      {"grid.n", T::Int, "64", "points per axis (when nx, ny, nz are 0)", 1, 1e5},
      {"grid.nx", T::Int, "0", "points along x (0: grid.n)", 0, 1e5},
      {"grid.ny", T::Int, "0", "points along y (0: grid.n)", 0, 1e5},
      {"grid.nz", T::Int, "0", "points along z (0: grid.n)", 0, 1e5},
      {"grid.length", T::Float, "1.0",
       "domain length along x; spacing = length / nx (same spacing on every axis unless hy, hz are set)", 0, kBig,
       true},
      {"grid.radius", T::Int, "1", "stencil radius R (order 2R): 1 = 7-point, 4 = 25-point", 1, 4},
      {"grid.boundary", T::String, "\"periodic\"", "boundary condition", -kBig, kBig, false, {"periodic", "fixed"}},
      {"grid.boundary_value", T::Float, "0.0", boundary_value_doc(), -kBig, kBig},
      {"grid.hy", T::Float, "0.0", "spacing along y (0: the x spacing)", 0, kBig},
      {"grid.hz", T::Float, "0.0", "spacing along z (0: the x spacing)", 0, kBig},
      // [stencil]
      {"stencil.equation", T::String, std::string("\"") + name(Equation::Heat) + "\"", "equation solved on the grid",
       -kBig, kBig, false, equation_names()},
      {"stencil.force", T::Bool, "false", "run even when run.dt exceeds the explicit stability limit"},
      {"stencil.temporal_steps", T::Int, "0",
       "tiling = temporal: time steps one pass fuses (0: chosen per equation, radius, boundary, grid and device)", 0,
       8},
  };
  k.insert(k.end(), keys.begin(), keys.end());
  StencilEquations::for_each([&](auto eq) { append_equation_keys<decltype(eq)>(k); });
}

std::vector<std::string> stencil_equation_sections() {
  std::vector<std::string> sections;
  StencilEquations::for_each([&](auto eq) {
    for (const auto& e : decltype(eq)::kKeys) {
      const std::string key = e.key, section = key.substr(0, key.find('.'));
      if (std::find(sections.begin(), sections.end(), section) == sections.end()) sections.push_back(section);
    }
  });
  return sections;
}

}  // namespace tiersim
