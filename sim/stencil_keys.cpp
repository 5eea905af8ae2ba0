// Case keys of the stencil model ([grid] and one section per equation).
#include "sim/case.hpp"

namespace tiersim {

void append_stencil_keys(std::vector<KeySpec>& k) {
  using T = KeySpec::Type;
  constexpr double kBig = 1e308;
  const std::vector<KeySpec> keys = {
      {"grid.n", T::Int, "64", "points per axis (when nx, ny, nz are 0)", 1, 1e5},
      {"grid.nx", T::Int, "0", "points along x (0: grid.n)", 0, 1e5},
      {"grid.ny", T::Int, "0", "points along y (0: grid.n)", 0, 1e5},
      {"grid.nz", T::Int, "0", "points along z (0: grid.n)", 0, 1e5},
      {"grid.length", T::Float, "1.0", "domain length along x; spacing = length / nx (same spacing on every axis unless hy, hz are set)", 0, kBig, true},
      {"grid.radius", T::Int, "1", "stencil radius R (order 2R): 1 = 7-point, 4 = 25-point", 1, 4},
      {"grid.boundary", T::String, "\"periodic\"", "boundary condition", -kBig, kBig, false, {"periodic", "fixed"}},
      {"grid.boundary_value", T::Float, "0.0", "field value held on fixed boundaries", -kBig, kBig},
  };
  k.insert(k.end(), keys.begin(), keys.end());
}

}  // namespace tiersim
