// Gray-Scott reaction-diffusion (two fields U, V), forward Euler:
//   dU/dt = Du lap U - U V^2 + F (1 - U);  dV/dt = Dv lap V + U V^2 - (F + k) V.
// (What each member is for: kernels/physics/equation.hpp.)
#pragma once

#include <cmath>

#include "kernels/physics/equation.hpp"

namespace tiersim::equations {

struct GrayScott {
  static constexpr const char* kName = "gray-scott";
  static constexpr const char* kKernelTag = "gray_scott";
  static constexpr int kFields = 2;
  static constexpr bool kPreviousLevel = false;
  static constexpr std::array<const char*, 2> kStateNames = {"U", "V"};
  static constexpr int kFieldAccessesPerPoint = 4;  // U, V read, U, V written
  static constexpr bool kGridUnits = true;          // Du, Dv in points^2 per unit time

  struct Constants {
    double du = 0.16, dv = 0.08, feed = 0.035, kill = 0.065;
    double boundary_u = 1.0, boundary_v = 0.0;  // fixed boundaries: the unreacted reservoir (1, 0)
  };
  template <class T>
  struct Params {
    T dt, du, dv, feed, kill;
  };
  template <class T>
  static Params<T> params(const Constants& c, double dt) {
    return {T(dt), T(c.du), T(c.dv), T(c.feed), T(c.kill)};
  }

  template <class T>
  TIERSIM_HD static void update(const Params<T>& p, const T (&u)[2], const T (&lap)[2], T /*u_prev*/, T (&out)[2]) {
    const T uvv = u[0] * u[1] * u[1];
    out[0] = u[0] + p.dt * (p.du * lap[0] - uvv + p.feed * (T(1) - u[0]));
    out[1] = u[1] + p.dt * (p.dv * lap[1] + uvv - (p.feed + p.kill) * u[1]);
  }
  static double flops_per_point(int R) { return 2 * laplacian_flops(R) + 16; }

  // Forward Euler, reaction included. Frozen at a state (u, v), on a Laplacian mode of
  // eigenvalue -lambda (0 <= lambda <= rho), the linearised system is
  //   [[-Du lambda - v^2 - F,  -2 u v              ],
  //    [ v^2,                  -Dv lambda + 2 u v - F - k]].
  // The off-diagonal product -2 u v^3 is <= 0, so the eigenvalues mu are real and lie between the
  // diagonal entries, or complex with the entries' mean as real part (and |Im mu|^2 <= 2 u v^3).
  // Assuming u, v in [0, 1] (where the equations keep them), every Re mu >= -M with
  //   M = max(Du rho + 1 + F, Dv rho + F + k),
  // and dt <= 2 / M keeps |1 + dt Re mu| <= 1 on every decaying mode: the stiff diffusive modes are
  // damped, not flipped and amplified (the imaginary part adds only dt^2 |Im mu|^2 <= 2 dt^2 to
  // |1 + dt mu|^2, second order as with any explicit scheme). The bound is attained at
  // (u, v) = (0, 1), where the matrix is triangular; in spots and stripes v stays below ~0.5 and the
  // sharp limit there is up to ~1.4x higher (0.68 against 0.92-1.0 at the defaults, R = 1, h = 1).
  // Diffusion alone (2 / (max(Du, Dv) rho) = 1.04 there) lets the U checkerboard grow inside spots.
  static double dt_limit(const Constants& c, double rho) {
    return 2.0 / std::fmax(c.du * rho + 1 + c.feed, c.dv * rho + c.feed + c.kill);
  }
  static std::string stability_rule(const Constants& c) {
    return "gray-scott, forward Euler with the reaction terms for U, V in [0, 1]: dt <= 2 / max(Du * rho + 1 + F, "
           "Dv * rho + F + k), Du = " +
           format_g(c.du) + ", Dv = " + format_g(c.dv) + ", F = " + format_g(c.feed) + ", k = " + format_g(c.kill);
  }

  template <class Probe>
  static ObservableValues observe(Probe& in) {
    const FieldStats u = in.stats(0), v = in.stats(1);
    const double np = in.points();
    return {{"u_mean", u.sum / np}, {"v_mean", v.sum / np}, {"u_min", u.min},
            {"u_max", u.max},       {"v_min", v.min},       {"v_max", v.max}};
  }
  // Nothing is conserved: the mean of V (how much has reacted) as it is.
  static constexpr Headline kHeadline = {1, "v_mean", "v_mean", false};

  // U and V need different values (the reservoir (1, 0) by default): one value for both drains U
  // (0) or feeds V without bound (1).
  static constexpr const char* kOwnBoundaryKeys = "gray_scott.boundary_u for U and gray_scott.boundary_v for V";
  static double fixed_boundary_value(const Constants& c, int state_field, double /*grid_value*/) {
    return state_field == 1 ? c.boundary_v : c.boundary_u;
  }

  static constexpr EquationKey<Constants> kKeys[] = {
      {.key = "gray_scott.du",
       .kind = KeyKind::Float,
       .doc = "diffusivity of U (grid units: length = n gives spacing 1)",
       .constant = &Constants::du,
       .min = 0},
      {.key = "gray_scott.dv", .kind = KeyKind::Float, .doc = "diffusivity of V", .constant = &Constants::dv, .min = 0},
      {.key = "gray_scott.feed", .kind = KeyKind::Float, .doc = "feed rate F", .constant = &Constants::feed, .min = 0},
      {.key = "gray_scott.kill", .kind = KeyKind::Float, .doc = "kill rate k", .constant = &Constants::kill, .min = 0},
      {.key = "gray_scott.seed",
       .kind = KeyKind::String,
       .doc = "initial V: random cubes of (U, V) = (0.5, 0.25), or noise everywhere",
       .default_value = "\"cubes\"",
       .choices = "cubes|noise"},
      {.key = "gray_scott.seed_count",
       .kind = KeyKind::Int,
       .doc = "number of seed cubes",
       .default_value = "12",
       .min = 0,
       .max = 1e6},
      {.key = "gray_scott.seed_size",
       .kind = KeyKind::Int,
       .doc = "edge of a seed cube in points",
       .default_value = "6",
       .min = 1,
       .max = 1e5},
      {.key = "gray_scott.noise",
       .kind = KeyKind::Float,
       .doc = "amplitude of the uniform noise added to U and V",
       .default_value = "0.02",
       .min = 0,
       .max = 1},
      {.key = "gray_scott.boundary_u",
       .kind = KeyKind::Float,
       .doc = "U held on fixed boundaries (1, with boundary_v = 0: the unreacted reservoir)",
       .constant = &Constants::boundary_u,
       .min = 0,
       .max = 1},
      {.key = "gray_scott.boundary_v",
       .kind = KeyKind::Float,
       .doc = "V held on fixed boundaries",
       .constant = &Constants::boundary_v,
       .min = 0,
       .max = 1},
  };
};

}  // namespace tiersim::equations
