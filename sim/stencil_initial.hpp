// Initial conditions of the stencil model: one function per equation (sim/stencil_initial.cpp)
// that reads the equation's keys and returns every array of the state.
#pragma once

#include <optional>
#include <vector>

#include "base/host_array.hpp"
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
  std::vector<HostArray<double>> fields;  // every array of the state (Eq::kStateNames), interior, x fastest
};

// The state at t = 0 of the case's equation on p's grid, planes [z0, z0 + nz) of it (a rank's
// slab; nz < 0: the whole grid), the same values as the whole grid's there. Where each point is a
// function of its coordinates or of its own random draws (sim/counter_random.hpp) only those
// planes are made (start-up and memory grow with the slab, not the grid); the wave pulse's
// u(-dt), a Laplacian, is made on the whole grid and cut. dt: the run's time step (a
// second-order scheme needs u(-dt)).
InitialState initial_state(const Case& c, const StencilProblem& p, double dt, int z0 = 0, int nz = -1);

// The case's point source (the wave from rest with wave.initial = "source"), or none; a run and a
// restart alike take it from the case.
std::optional<PointSource> point_source(const Case& c, const StencilProblem& p);

// Whether initial_state makes the whole grid even for a slab (the wave pulse's Laplacian): what
// a rank's host memory must hold at start-up.
bool initial_state_needs_whole_grid(const Case& c, Equation equation);

}  // namespace tiersim
