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
      {"grid.boundary_value", T::Float, "0.0", "field value held on fixed boundaries (heat, wave; gray-scott: gray_scott.boundary_u, boundary_v)", -kBig, kBig},
      {"grid.hy", T::Float, "0.0", "spacing along y (0: the x spacing)", 0, kBig},
      {"grid.hz", T::Float, "0.0", "spacing along z (0: the x spacing)", 0, kBig},
      // [stencil]
      {"stencil.equation", T::String, "\"heat\"", "equation solved on the grid", -kBig, kBig, false, {"heat", "wave", "gray-scott"}},
      {"stencil.force", T::Bool, "false", "run even when run.dt exceeds the explicit stability limit"},
      // [heat]
      {"heat.diffusivity", T::Float, "1.0", "diffusivity D of du/dt = D lap u", 0, kBig, true},
      {"heat.pulse_width", T::Float, "0.05", "standard deviation of the initial Gaussian pulse (length units)", 0, kBig, true},
      {"heat.amplitude", T::Float, "1.0", "peak of the initial Gaussian pulse", -kBig, kBig},
      {"heat.background", T::Float, "0.0", "value added everywhere to the initial field", -kBig, kBig},
      // [wave]
      {"wave.speed", T::Float, "1.0", "wave speed c of u_tt = c^2 lap u", 0, kBig, true},
      {"wave.initial", T::String, "\"source\"", "initial field: at rest with a Ricker point source, a Gaussian pulse at rest, or a standing wave", -kBig, kBig, false, {"source", "pulse", "standing"}},
      {"wave.source_frequency", T::Float, "10.0", "peak frequency f of the Ricker wavelet source", 0, kBig, true},
      {"wave.source_delay", T::Float, "0.0", "time of the wavelet's peak (0: 1.2 / f)", 0, kBig},
      {"wave.source_amplitude", T::Float, "1.0", "amplitude of the source term (per unit volume: divided by the cell volume)", -kBig, kBig},
      {"wave.source_x", T::Float, "0.5", "source position along x, as a fraction of the domain", 0, 1},
      {"wave.source_y", T::Float, "0.5", "source position along y, as a fraction of the domain", 0, 1},
      {"wave.source_z", T::Float, "0.5", "source position along z, as a fraction of the domain", 0, 1},
      {"wave.pulse_width", T::Float, "0.05", "standard deviation of the Gaussian pulse (initial = pulse)", 0, kBig, true},
      {"wave.mode", T::Int, "1", "wavelengths per domain along each axis (initial = standing)", 1, 1e5},
      // [gray_scott]
      {"gray_scott.du", T::Float, "0.16", "diffusivity of U (grid units: length = n gives spacing 1)", 0, kBig},
      {"gray_scott.dv", T::Float, "0.08", "diffusivity of V", 0, kBig},
      {"gray_scott.feed", T::Float, "0.035", "feed rate F", 0, kBig},
      {"gray_scott.kill", T::Float, "0.065", "kill rate k", 0, kBig},
      {"gray_scott.seed", T::String, "\"cubes\"", "initial V: random cubes of (U, V) = (0.5, 0.25), or noise everywhere", -kBig, kBig, false, {"cubes", "noise"}},
      {"gray_scott.seed_count", T::Int, "12", "number of seed cubes", 0, 1e6},
      {"gray_scott.seed_size", T::Int, "6", "edge of a seed cube in points", 1, 1e5},
      {"gray_scott.noise", T::Float, "0.02", "amplitude of the uniform noise added to U and V", 0, 1},
      {"gray_scott.boundary_u", T::Float, "1.0", "U held on fixed boundaries (1, with boundary_v = 0: the unreacted reservoir)", 0, 1},
      {"gray_scott.boundary_v", T::Float, "0.0", "V held on fixed boundaries", 0, 1},
  };
  k.insert(k.end(), keys.begin(), keys.end());
}

}  // namespace tiersim
