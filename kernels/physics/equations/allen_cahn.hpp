// The Allen-Cahn equation u_t = eps^2 lap u + u - u^3, forward Euler: phase separation of a field
// into the stable states u = -1 and u = +1, joined by interfaces of width ~ eps (the stationary
// planar interface is u = tanh(x / (sqrt(2) eps))). (What each member is for:
// kernels/physics/equation.hpp.)
#pragma once

#include "kernels/physics/equation.hpp"

namespace tiersim::equations {

struct AllenCahn {
  static constexpr const char* kName = "allen-cahn";
  static constexpr const char* kKernelTag = "allen_cahn";
  static constexpr int kFields = 1;
  static constexpr bool kPreviousLevel = false;
  static constexpr std::array<const char*, 1> kStateNames = {"u"};
  static constexpr int kFieldAccessesPerPoint = 2;  // u(t) read, u(t + dt) written
  static constexpr bool kGridUnits = false;

  struct Constants {
    double epsilon = 0.03;  // interface width eps (length units): 2 grid points at n = 64 on the unit cube
  };
  template <class T>
  struct Params {
    T dt, dt_eps2;  // dt, dt * eps^2
  };
  template <class T>
  static Params<T> params(const Constants& c, double dt) {
    return {T(dt), T(dt * c.epsilon * c.epsilon)};
  }

  template <class T>
  TIERSIM_HD static void update(const Params<T>& p, const T (&u)[1], const T (&lap)[1], T /*u_prev*/, T (&out)[1]) {
    const T v = u[0];
    out[0] = v + (p.dt_eps2 * lap[0] + p.dt * (v - v * v * v));  // forward Euler
  }
  // The Laplacian, then v*v, *v, v - ., dt * ., dt_eps2 * lap, +, v + .
  static double flops_per_point(int R) { return laplacian_flops(R) + 7; }

  // Forward Euler, reaction included. Linearised about a state u, on a Laplacian mode of
  // eigenvalue -lambda (0 <= lambda <= rho), the rate is mu = -eps^2 lambda + f'(u) with
  // f(u) = u - u^3, f'(u) = 1 - 3 u^2. Assuming u in [-1, 1] (where the equation keeps it: the
  // stable states are +-1), f'(u) lies in [-2, 1], so mu lies in [-(eps^2 rho + 2), 1]. The
  // positive rates (up to 1, at u = 0) are the physical growth of the unstable state, which the
  // scheme follows with a first-order error; the decaying ones need |1 + dt mu| <= 1, i.e.
  //   dt <= 2 / (eps^2 rho + 2),
  // attained at u = +-1 on the checkerboard mode (lambda = rho). Fields outside [-1, 1] (f' < -2)
  // need a smaller step.
  static double dt_limit(const Constants& c, double rho) { return 2.0 / (c.epsilon * c.epsilon * rho + 2); }
  static std::string stability_rule(const Constants& c) {
    return "allen-cahn, forward Euler with the reaction for u in [-1, 1]: dt <= 2 / (eps^2 * rho + 2), eps = " +
           format_g(c.epsilon);
  }

  template <class Probe>
  static ObservableValues observe(Probe& in) {
    const FieldStats st = in.stats(0);
    return {{"u_mean", st.sum / in.points()}, {"u_min", st.min}, {"u_max", st.max}};
  }
  // Nothing is conserved (the mean moves as the phases coarsen): the mean as it is.
  static constexpr Headline kHeadline = {0, "u_mean", "u_mean", false};

  static constexpr const char* kOwnBoundaryKeys = nullptr;
  static double fixed_boundary_value(const Constants&, int /*state_field*/, double grid_value) { return grid_value; }

  static constexpr EquationKey<Constants> kKeys[] = {
      {.key = "allen_cahn.epsilon",
       .kind = KeyKind::Float,
       .doc = "interface width eps of u_t = eps^2 lap u + u - u^3 (length units)",
       .constant = &Constants::epsilon,
       .min = 0,
       .min_exclusive = true},
      {.key = "allen_cahn.initial",
       .kind = KeyKind::String,
       .doc = "initial field: uniform noise in [-allen_cahn.noise, allen_cahn.noise] less its mean, or a slab of u = 1 "
              "between two planar tanh interfaces at x = L/4 and 3L/4 (the stationary profile)",
       .default_value = "\"noise\"",
       .choices = "noise|slab"},
      {.key = "allen_cahn.noise",
       .kind = KeyKind::Float,
       .doc = "amplitude of the initial noise (initial = noise)",
       .default_value = "0.1",
       .min = 0,
       .max = 1},
  };
};

}  // namespace tiersim::equations
