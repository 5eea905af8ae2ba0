// Initial conditions of the stencil model: one function per equation (sim/stencil_initial.cpp)
// that reads the equation's keys and returns every array of the state.
#pragma once

#include <optional>
#include <vector>

#include "kernels/stencil_engine.hpp"
#include "sim/case.hpp"

namespace tiersim {

// A Ricker wavelet added at one grid point after every step (the wave equation's source):
// leapfrog adds dt^2 s(t) / cell volume, s(t) = amplitude * ricker(t, frequency, delay).
struct PointSource {
  int at[3] = {0, 0, 0};
  double frequency = 0, delay = 0, amplitude = 0;
};

struct InitialState {
  std::vector<std::vector<double>> fields;  // every array of the state (Eq::kStateNames), interior, x fastest
  std::optional<PointSource> source;
};

// The state at t = 0 of the case's equation on p's grid; dt: the run's time step (a second-order
// scheme needs u(-dt)).
InitialState initial_state(const Case& c, const StencilProblem& p, double dt);

}  // namespace tiersim
