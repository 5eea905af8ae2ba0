// The Allen-Cahn equation u_t = eps^2 lap u + u - u^3 on the CPU backend: the uniform field
// against the exact solution of u' = u - u^3, the planar tanh interfaces against the stationary
// profile, the stability limit at the state where it is attained, and the case file through
// the model.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "kernels/stencil_engine.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"
#include "field_modes.hpp"

using namespace tiersim;
using equations::AllenCahn;
using tiersim::test::checkerboard;

namespace {

Strategy cpu(Precision p = Precision::Fp64) {
  Strategy s;
  s.backend = Backend::Cpu;
  s.precision = p;
  return s;
}

std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

double reaction(double u) { return u - u * u * u; }

// u' = u - u^3, u(0) = u0: u(t) = u0 e^t / sqrt(1 - u0^2 + u0^2 e^(2t)).
double exact_uniform(double u0, double t) {
  return u0 * std::exp(t) / std::sqrt(1 - u0 * u0 + u0 * u0 * std::exp(2 * t));
}

// The model's field 0 (interior, x fastest), through its restart state.
std::vector<double> model_field(Model& m) {
  const ModelState st = m.save_state();
  return {st.arrays.at(0).second.begin(), st.arrays.at(0).second.end()};
}

std::string slab_case(int nx, int R, double eps, double dt, int steps) {
  char b[640];
  std::snprintf(b, sizeof b,
                "[run]\nmodel = \"stencil\"\ndt = %.17g\nsteps = %d\n[strategy]\nbackend = \"cpu\"\nprecision = "
                "\"fp64\"\n[grid]\nnx = %d\nny = 4\nnz = 4\nlength = 1.0\nradius = %d\n[stencil]\nequation = "
                "\"allen-cahn\"\n[allen_cahn]\nepsilon = %.17g\ninitial = \"slab\"\n",
                dt, steps, nx, R, eps);
  return b;
}

}  // namespace

// A uniform field has a zero Laplacian, so every point follows forward Euler on u' = f(u) =
// u - u^3. Its global error has the leading term e(T) = -(dt / 2) f(u(T)) ln(f(u(T)) / f(u0))
// (the error equation e' = f'(u) e - (dt/2) u'', with u'' = f'(u) f(u) and the propagator
// f(u(T)) / f(u(s)) of an autonomous scalar equation), and a remainder of order dt^2. Stated
// tolerance: the error within 2% of that term at dt = 0.01 (the recurrence u + dt f(u) alone,
// evaluated in double, is 0.71%, 0.26% and 0.28% off it for the three cases). The error is
// 4.6e-4 to 1.8e-3, far above rounding, and of either sign; a wrong reaction or a scheme of
// another order misses it by far more than 2%.
TEST(StencilAllenCahn, UniformFieldFollowsTheExactOdeSolution) {
  struct Run {
    double u0, t_end;
  };
  for (const Run r : {Run{0.1, 2.5}, Run{-0.3, 2.0}, Run{0.5, 1.5}}) {
    StencilProblem p;
    p.equation = Equation::AllenCahn;
    p.nx = 10, p.ny = 8, p.nz = 6;
    p.radius = 2;
    p.h[0] = p.h[1] = p.h[2] = 0.1;
    auto eng = make_stencil_cpu(cpu(), p);
    eng->upload(0, std::vector<double>(std::size_t(p.points()), r.u0));
    const double dt = 0.01;
    const int steps = int(std::lround(r.t_end / dt));
    for (int s = 0; s < steps; ++s) eng->step(dt);
    const FieldStats st = eng->stats(0);
    const double exact = exact_uniform(r.u0, r.t_end);
    const double predicted = -0.5 * dt * reaction(exact) * std::log(reaction(exact) / reaction(r.u0));
    const std::string tag = "u0=" + sci(r.u0);
    RecordProperty("error_" + tag, sci(st.max - exact));
    RecordProperty("error_over_leading_term_" + tag, sci((st.max - exact) / predicted));
    EXPECT_LT(st.max - st.min, 1e-12) << tag << ": the field must stay uniform";
    EXPECT_NEAR((st.min - exact) / predicted, 1.0, 0.02) << tag << ": error " << st.min - exact;
    EXPECT_NEAR((st.max - exact) / predicted, 1.0, 0.02) << tag << ": error " << st.max - exact;
    EXPECT_GT(std::fabs(exact - r.u0), 0.3) << tag << ": the solution must have moved";
  }
}

// Two planar interfaces u = tanh((x - 1/4) / w) - tanh((x - 3/4) / w) - 1, w = sqrt(2) eps, on the
// periodic unit interval (allen_cahn.initial = "slab"): each is the stationary solution of the
// continuous equation (the other's tail, 2 exp(-1 / (2 w)) = 4e-8 at eps = 0.02, is negligible).
// The discrete profile settles near it, off by the spatial truncation error tau = eps^2 (L_h u -
// u''), computed here from the exact u''. Forward Euler has the same fixed points as the
// semi-discrete equation, so dt adds nothing to the steady deviation; the linearised operator
// decays at rate 3/2 or faster on the perturbations tau excites (odd about each interface: the
// translation mode, rate 0, is even), so the deviation stays below max|tau| / (3/2), the stated
// tolerance. (A 1D run of the same scheme in double settles at 0.57 of it at R = 1 and 0.27 at
// R = 2.) Checked after t = 4, many times the relaxation time 2/3, for R = 1 and 2 with eps = 2.56
// grid spacings. It can fail: a profile 1.5 times too wide, a solution of no equation here, moves
// away by more than ten times the tolerance.
TEST(StencilAllenCahn, PlanarInterfacesAreStationary) {
  const int n = 128;
  const double eps = 0.02, h = 1.0 / n, w = std::sqrt(2.0) * eps, t_end = 4.0;
  auto profile = [&](double width, int i) {
    const double x = i * h;
    return std::tanh((x - 0.25) / width) - std::tanh((x - 0.75) / width) - 1;
  };
  for (int R = 1; R <= 2; ++R) {
    // max |tau| from the discrete Laplacian of the exact profile (periodic in x; constant in y, z).
    const StencilCoeffs<double> c = make_laplacian_coeffs<double>(R, h, h, h);
    double tau = 0;
    for (int i = 0; i < n; ++i) {
      double lap = c.center * profile(w, i);
      for (int k = 1; k <= R; ++k)
        lap += c.x[k - 1] * (profile(w, (i - k + n) % n) + profile(w, (i + k) % n)) +
               2 * (c.y[k - 1] + c.z[k - 1]) * profile(w, i);
      auto d2 = [&](double x0) {
        const double t = std::tanh((i * h - x0) / w);
        return -2 * t * (1 - t * t) / (w * w);
      };
      tau = std::max(tau, std::fabs(eps * eps * (lap - (d2(0.25) - d2(0.75)))));
    }
    const double tol = tau / 1.5;
    StencilProblem p;
    p.equation = Equation::AllenCahn;
    p.nx = n, p.ny = p.nz = 4, p.radius = R;
    p.h[0] = p.h[1] = p.h[2] = h;
    p.constants<AllenCahn>().epsilon = eps;
    const double dt = 0.5 * stencil_dt_limit(p);
    const int steps = int(std::ceil(t_end / dt));
    const Case cs = Case::parse(slab_case(n, R, eps, dt, steps), "slab.toml");
    auto m = make_stencil_model(cs, strategy_from_case(cs));
    for (int s = 0; s < steps; ++s) m->step(dt);
    const std::vector<double> u = model_field(*m);
    double dev = 0;
    for (std::size_t q = 0; q < u.size(); ++q) dev = std::max(dev, std::fabs(u[q] - profile(w, int(q % n))));
    const std::string tag = std::string("R") + char('0' + R);
    RecordProperty("max_deviation_" + tag, sci(dev));
    RecordProperty("tolerance_" + tag, sci(tol));
    EXPECT_LT(dev, tol) << tag;
    EXPECT_GT(tol, 1e-5) << tag << ": the tolerance must be the truncation error, not rounding";
    // The control: a profile too wide is not stationary.
    auto eng = make_stencil_cpu(cpu(), p);
    std::vector<double> wide(u.size());
    for (std::size_t q = 0; q < wide.size(); ++q) wide[q] = profile(1.5 * w, int(q % n));
    eng->upload(0, wide);
    for (int s = 0; s < steps; ++s) eng->step(dt);
    const std::vector<double> v = eng->download(0);
    double moved = 0;
    for (std::size_t q = 0; q < v.size(); ++q) moved = std::max(moved, std::fabs(v[q] - wide[q]));
    RecordProperty("wide_profile_deviation_" + tag, sci(moved));
    EXPECT_GT(moved, 10 * tol) << tag;
  }
}

// The limit dt <= 2 / (eps^2 rho + 2) is attained at the stable states u = +-1 (f'(u) = -2) on the
// checkerboard mode: there one step multiplies a small perturbation's checkerboard by
// 1 - dt (eps^2 rho + 2), -0.9 at 0.95 of the limit (2.7e-5 after 100 steps) and -1.1 at 1.05 of
// it (1.4e4). From u = -1 + noise of 1e-7 (at most 1.4e-3 after the growth: f' moves by 6 times
// that, so the growth stays linear; and 2.7e-5 of it stays well above the rounding of values near
// -1, 1e-16), for R = 1 and 4 and unequal spacing. Checked with a factor 37 and 14 of margin:
// below 1e-3 and above 1e3 of the start.
TEST(StencilAllenCahn, StabilityLimitIsAttainedAtTheStableStates) {
  for (int R : {1, 4})
    for (double frac : {0.95, 1.05}) {
      StencilProblem p;
      p.equation = Equation::AllenCahn;
      p.nx = 16, p.ny = 12, p.nz = 10;  // even: the checkerboard mode exists
      p.radius = R;
      p.h[0] = 0.05, p.h[1] = 0.06, p.h[2] = 0.045;
      p.constants<AllenCahn>().epsilon = 0.04;
      auto eng = make_stencil_cpu(cpu(), p);
      std::mt19937_64 rng(7 + unsigned(R));
      std::uniform_real_distribution<double> d(-1e-7, 1e-7);
      std::vector<double> u(std::size_t(p.points()));
      for (auto& x : u) x = -1 + d(rng);
      eng->upload(0, u);
      std::vector<double> dev(u.size());
      for (std::size_t q = 0; q < u.size(); ++q) dev[q] = u[q] + 1;
      const double c0 = checkerboard(dev, p.nx, p.ny, p.nz), dt = frac * stencil_dt_limit(p);
      for (int s = 0; s < 100; ++s) eng->step(dt);
      const std::vector<double> v = eng->download(0);
      for (std::size_t q = 0; q < v.size(); ++q) dev[q] = v[q] + 1;
      const double c = checkerboard(dev, p.nx, p.ny, p.nz);
      const std::string tag = std::string("R") + char('0' + R) + (frac < 1 ? "_0.95" : "_1.05");
      RecordProperty("checkerboard_ratio_" + tag, sci(c / c0));
      if (frac < 1)
        EXPECT_LT(c, 1e-3 * c0) << tag;
      else
        EXPECT_GT(c, 1e3 * c0) << tag;
    }
}

// cases/allen_cahn.toml through the model at a reduced size (32^3, the case's spacing and eps,
// t = 12): the noise of +-0.1 (mean removed) loses its short waves to diffusion (rate 1 - eps^2 k^2
// < 0 for k > 1/eps), its longest waves grow (rate 0.86 at L = 0.5) and saturate at the two
// phases (both present: the noise has no mean to favour one). Checked: each phase (|u| > 0.9 of
// its sign) holds more than 10% of the points (measured 22% and 18%; the rest are the interfaces,
// 2 sqrt(2) eps = 0.085 wide in a box of 0.5), the observables are the mean, min and max, and the
// values stay within [-1, 1] up to 1e-3 (the stable states attract).
TEST(StencilAllenCahn, CaseSeparatesIntoTwoPhases) {
  const Case c = Case::load(std::string(TIERSIM_SOURCE_DIR) + "/cases/allen_cahn.toml",
                            {"strategy.backend=cpu", "grid.n=32", "grid.length=0.5", "run.steps=300"});
  auto m = make_stencil_model(c, strategy_from_case(c));
  const Observables o0 = m->observe();
  ASSERT_EQ(o0.size(), 3u);
  EXPECT_EQ(o0[0].first, "u_mean");
  EXPECT_EQ(o0[1].first, "u_min");
  EXPECT_EQ(o0[2].first, "u_max");
  EXPECT_GE(o0[1].second, -0.11);  // +-0.1 less the mean
  EXPECT_LE(o0[2].second, 0.11);
  EXPECT_LT(std::fabs(o0[0].second), 1e-6) << "the noise's mean is removed";
  const double dt = c.get_float("run.dt");
  for (int s = 0; s < 300; ++s) m->step(dt);
  const Observables o = m->observe();
  RecordProperty("u_min", sci(o[1].second));
  RecordProperty("u_max", sci(o[2].second));
  EXPECT_LT(o[1].second, -0.9);
  EXPECT_GT(o[2].second, 0.9);
  EXPECT_GE(o[1].second, -1.001);
  EXPECT_LE(o[2].second, 1.001);
  const std::vector<double> u = model_field(*m);
  std::size_t plus = 0, minus = 0;
  for (double x : u) plus += x > 0.9, minus += x < -0.9;
  const double share_plus = double(plus) / double(u.size()), share_minus = double(minus) / double(u.size());
  RecordProperty("share_above_0.9", sci(share_plus));
  RecordProperty("share_below_-0.9", sci(share_minus));
  EXPECT_GT(share_plus, 0.1) << "the phase u = +1";
  EXPECT_GT(share_minus, 0.1) << "the phase u = -1";
  EXPECT_EQ(m->conservation(o).first, "u_mean");
}
