// The wave equation u_tt = c^2 lap u, leapfrog (second order in time: the state holds u(t) and
// u(t - dt), and the update writes u(t + dt) over u(t - dt)). (What each member is for:
// kernels/physics/equation.hpp.)
#pragma once

#include <cmath>

#include "kernels/physics/equation.hpp"

namespace tiersim {

// Ricker wavelet (Mexican hat) of peak frequency f, centred at t0: the wave equation's point source.
TIERSIM_HD inline double ricker(double t, double f, double t0) {
  const double a = 3.14159265358979323846 * f * (t - t0);
  const double a2 = a * a;
  return (1 - 2 * a2) * std::exp(-a2);
}

}  // namespace tiersim

namespace tiersim::equations {

struct Wave {
  static constexpr const char* kName = "wave";
  static constexpr const char* kKernelTag = "wave";
  static constexpr int kFields = 1;
  static constexpr bool kPreviousLevel = true;
  static constexpr std::array<const char*, 2> kStateNames = {"u", "u_prev"};
  static constexpr int kFieldAccessesPerPoint = 3;  // u(t) and u(t - dt) read, u(t + dt) written
  static constexpr bool kGridUnits = false;

  struct Constants {
    double speed = 1.0;  // c
  };
  template <class T>
  struct Params {
    T c2dt2;  // (c dt)^2
  };
  template <class T>
  static Params<T> params(const Constants& c, double dt) {
    return {T(c.speed * c.speed * dt * dt)};
  }

  // Leapfrog: u(t+dt) = 2 u(t) - u(t-dt) + (c dt)^2 lap u(t).
  template <class T>
  TIERSIM_HD static void update(const Params<T>& p, const T (&u)[1], const T (&lap)[1], T u_prev, T (&out)[1]) {
    out[0] = (u[0] + u[0] - u_prev) + p.c2dt2 * lap[0];
  }
  static double flops_per_point(int R) { return laplacian_flops(R) + 4; }

  // Leapfrog on the Laplacian's eigenvalues -lambda, 0 <= lambda <= rho: c^2 dt^2 rho <= 4.
  static double dt_limit(const Constants& c, double rho) { return 2.0 / (c.speed * std::sqrt(rho)); }
  static std::string stability_rule(const Constants& c) {
    return "wave, leapfrog: dt <= 2 / (c * sqrt(rho)), c = " + format_g(c.speed);
  }

  template <class Probe>
  static ObservableValues observe(Probe& in) {
    const FieldStats st = in.stats(0);
    return {{"energy", in.wave_energy() * in.cell_volume()}, {"min", st.min}, {"max", st.max}};
  }
  // Leapfrog's discrete energy: conserved to rounding with periodic or zero boundaries.
  static constexpr Headline kHeadline = {0, "dE/E0", "E", true};

  // Both levels are u: they hold the same value.
  static constexpr const char* kOwnBoundaryKeys = nullptr;
  static double fixed_boundary_value(const Constants&, int /*state_field*/, double grid_value) { return grid_value; }

  static constexpr EquationKey<Constants> kKeys[] = {
      {.key = "wave.speed",
       .kind = KeyKind::Float,
       .doc = "wave speed c of u_tt = c^2 lap u",
       .constant = &Constants::speed,
       .min = 0,
       .min_exclusive = true},
      {.key = "wave.initial",
       .kind = KeyKind::String,
       .doc = "initial field: at rest with a Ricker point source, a Gaussian pulse at rest, or a standing wave",
       .default_value = "\"source\"",
       .choices = "source|pulse|standing"},
      {.key = "wave.source_frequency",
       .kind = KeyKind::Float,
       .doc = "peak frequency f of the Ricker wavelet source",
       .default_value = "10.0",
       .min = 0,
       .min_exclusive = true},
      {.key = "wave.source_delay",
       .kind = KeyKind::Float,
       .doc = "time of the wavelet's peak (0: 1.2 / f)",
       .default_value = "0.0",
       .min = 0},
      {.key = "wave.source_amplitude",
       .kind = KeyKind::Float,
       .doc = "amplitude of the source term (per unit volume: divided by the cell volume)",
       .default_value = "1.0"},
      {.key = "wave.source_x",
       .kind = KeyKind::Float,
       .doc = "source position along x, as a fraction of the domain",
       .default_value = "0.5",
       .min = 0,
       .max = 1},
      {.key = "wave.source_y",
       .kind = KeyKind::Float,
       .doc = "source position along y, as a fraction of the domain",
       .default_value = "0.5",
       .min = 0,
       .max = 1},
      {.key = "wave.source_z",
       .kind = KeyKind::Float,
       .doc = "source position along z, as a fraction of the domain",
       .default_value = "0.5",
       .min = 0,
       .max = 1},
      {.key = "wave.pulse_width",
       .kind = KeyKind::Float,
       .doc = "standard deviation of the Gaussian pulse (initial = pulse)",
       .default_value = "0.05",
       .min = 0,
       .min_exclusive = true},
      {.key = "wave.mode",
       .kind = KeyKind::Int,
       .doc = "wavelengths per domain along each axis (initial = standing)",
       .default_value = "1",
       .min = 1,
       .max = 1e5},
  };
};

}  // namespace tiersim::equations
