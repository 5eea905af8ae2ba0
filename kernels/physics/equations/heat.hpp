// The heat (diffusion) equation du/dt = D lap u, forward Euler. (What each member is for:
// kernels/physics/equation.hpp.)
#pragma once

#include "kernels/physics/equation.hpp"

namespace tiersim::equations {

struct Heat {
  static constexpr const char* kName = "heat";
  static constexpr const char* kKernelTag = "heat";
  static constexpr int kFields = 1;
  static constexpr bool kPreviousLevel = false;
  static constexpr std::array<const char*, 1> kStateNames = {"u"};
  static constexpr int kFieldAccessesPerPoint = 2;  // u(t) read, u(t + dt) written
  static constexpr bool kGridUnits = false;

  struct Constants {
    double diffusivity = 1.0;  // D
  };
  template <class T>
  struct Params {
    T dt_diffusivity;  // dt * D
  };
  template <class T>
  static Params<T> params(const Constants& c, double dt) {
    return {T(dt * c.diffusivity)};
  }

  template <class T>
  TIERSIM_HD static void update(const Params<T>& p, const T (&u)[1], const T (&lap)[1], T /*u_prev*/, T (&out)[1]) {
    out[0] = u[0] + p.dt_diffusivity * lap[0];  // forward Euler
  }
  static double flops_per_point(int R) { return laplacian_flops(R) + 2; }

  // Forward Euler on the Laplacian's eigenvalues -lambda, 0 <= lambda <= rho: |1 - dt D lambda| <= 1.
  static double dt_limit(const Constants& c, double rho) { return 2.0 / (c.diffusivity * rho); }
  static std::string stability_rule(const Constants& c) {
    return "heat, forward Euler: dt <= 2 / (D * rho), D = " + format_g(c.diffusivity);
  }

  template <class Probe>
  static ObservableValues observe(Probe& in) {
    const FieldStats st = in.stats(0);
    return {{"total_heat", st.sum * in.cell_volume()}, {"min", st.min}, {"max", st.max}};
  }
  // Total heat: conserved with periodic boundaries.
  static constexpr Headline kHeadline = {0, "dQ/Q0", "Q", true};

  static constexpr const char* kOwnBoundaryKeys = nullptr;
  static double fixed_boundary_value(const Constants&, int /*state_field*/, double grid_value) { return grid_value; }

  static constexpr EquationKey<Constants> kKeys[] = {
      {.key = "heat.diffusivity",
       .kind = KeyKind::Float,
       .doc = "diffusivity D of du/dt = D lap u",
       .constant = &Constants::diffusivity,
       .min = 0,
       .min_exclusive = true},
      {.key = "heat.pulse_width",
       .kind = KeyKind::Float,
       .doc = "standard deviation of the initial Gaussian pulse (length units)",
       .default_value = "0.05",
       .min = 0,
       .min_exclusive = true},
      {.key = "heat.amplitude",
       .kind = KeyKind::Float,
       .doc = "peak of the initial Gaussian pulse",
       .default_value = "1.0"},
      {.key = "heat.background",
       .kind = KeyKind::Float,
       .doc = "value added everywhere to the initial field",
       .default_value = "0.0"},
  };
};

}  // namespace tiersim::equations
