// What a stencil equation is made of. Each equation is one traits type in
// kernels/physics/equations/ (heat.hpp, wave.hpp, ...), listed once in kernels/physics/equations.hpp;
// the CPU loop, the CUDA kernels, the model, the case keys, the benchmarks and the tests are
// instantiated from that list. A traits type E holds, as static members:
//
//   kName            the equation's one spelling: the stencil.equation value, messages, the model name
//   kKernelTag       the identifier in kernel names ("stencil_<tag>_shared_r1...", "stencil_<tag>_cpu")
//   kFields          fields the stencil reads (with halos) and the update writes, 1 or 2
//   kPreviousLevel   true: the update also reads the field at t - dt at the point (leapfrog), and
//                    writes t + dt over it (one field only)
//   kStateNames      the arrays of the state: the kFields fields (their snapshot names), then the
//                    previous level if there is one
//   kFieldAccessesPerPoint  compulsory accesses of one update per point: each input read once
//                    (the previous level included), each output written once
//   kGridUnits       the default constants are meant for spacing 1 (grid units), not a unit cube
//   Constants        the physical constants (double), set from the case keys that name a member
//   Params<T>        what the point update takes, built by params<T>(constants, dt) once per step
//                    (pre-multiplied by dt where that saves work per point)
//   update<T>(params, u[kFields], lap[kFields], u_prev, out[kFields])   the point update,
//                    TIERSIM_HD: from the centre values and their Laplacians (laplacian<R>)
//   flops_per_point(R)      flops of one update at one point, the Laplacians included
//   dt_limit(constants, rho), stability_rule(constants)   the explicit stability limit for a
//                    Laplacian of spectral radius rho, and the rule as the refusal prints it
//   observe(probe)   the observables (name, value) from the probe's statistics (ObservableProbe)
//   kHeadline        the observable the progress line shows (Headline)
//   kOwnBoundaryKeys nullptr when fixed boundaries hold grid.boundary_value; else the keys that
//                    set each field's value, as messages name them
//   fixed_boundary_value(constants, state_field, grid_value)   the value a field's fixed halo holds
//   kKeys            the case keys of the equation's section (EquationKey)
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/hd.hpp"
#include "kernels/physics/stencil.hpp"

namespace tiersim {

// One pass over a field's interior (on the device with CUDA): sum and sum of squares of every
// value (a NaN makes them NaN), min and max (NaN skipped, infinities count), and where the
// non-finite values are: how many, and the smallest linear interior index (x fastest,
// (k * ny + j) * nx + i) of one, -1 when there is none.
struct FieldStats {
  double sum = 0, sum_sq = 0, min = 0, max = 0;
  std::int64_t non_finite = 0;
  std::int64_t first_non_finite = -1;
};

// Observables as the model reports them: name and value, in the equation's order.
using ObservableValues = std::vector<std::pair<std::string, double>>;

// What observe() may ask of its probe (the model implements it over an engine):
//   FieldStats stats(int state_field); double cell_volume(); double points();
//   double wave_energy();   leapfrog's discrete energy per unit cell volume (the wave equation)

// The progress line's figure: observable `observable`, shown as its change relative to its first
// value under `label` (relative), or as it is under `label`; `absolute_label` when the first
// value is zero (no relative change).
struct Headline {
  int observable;
  const char* label;
  const char* absolute_label;
  bool relative;
};

enum class KeyKind { Int, Float, String, Bool };

// One case key of an equation's section. A Float key that names a member of Constants sets it
// (model and benchmarks read the value into StencilProblem::constants); its default is that
// member's value in Constants{}, so default_value stays nullptr. The other keys (initial
// conditions) carry their default as TOML text.
template <class Constants>
struct EquationKey {
  using Member = double Constants::*;  // (an alias: nvcc's host code would parenthesise the declarator)
  const char* key;                     // "section.name"
  KeyKind kind;
  const char* doc;                      // one line for the README table
  Member constant = nullptr;            // the member this key sets
  const char* default_value = nullptr;  // TOML text; nullptr: from Constants{} (constant keys)
  double min = -1e308, max = 1e308;     // numeric range (inclusive unless min_exclusive)
  bool min_exclusive = false;
  const char* choices = nullptr;  // String keys: "a|b|c"
};

// "%.6g", as refusals and descriptions print numbers.
inline std::string format_g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// A double as TOML float text, shortest round trip ("0.16", "1.0").
inline std::string toml_float(double v) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof b, v);
  std::string s(b, r.ptr);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

}  // namespace tiersim
