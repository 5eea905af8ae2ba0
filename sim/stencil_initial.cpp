// Initial conditions of the stencil model, one overload of initial() per listed equation: an
// equation without one does not compile (initial_state dispatches to all of them).
#include "sim/stencil_initial.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/counter_random.hpp"

namespace tiersim {
namespace {

// The grid the fields are sampled on: point i of axis a sits at i * h[a]. Planes [k0, k0 + nk)
// of it are sampled (a rank's slab; all of them by default); at() is x fastest, then y, then z.
struct Grid {
  const StencilProblem& p;
  int k0 = 0, nk = p.nz;
  double coord(int a, int i) const { return i * p.h[a]; }
  int n(int a) const { return a == 0 ? p.nx : a == 1 ? p.ny : p.nz; }
  double extent(int a) const { return n(a) * p.h[a]; }
  std::size_t at(int i, int j, int k) const { return (std::size_t(k) * p.ny + j) * p.nx + i; }
  std::size_t points() const { return std::size_t(p.nx) * std::size_t(p.ny) * std::size_t(nk); }
  Grid whole() const { return Grid{p}; }

  // f of each point's indices in the whole grid (i, j, k). In parallel (OpenMP): each point is f
  // of its indices alone, so the values are those of a serial loop (and of the whole grid's, plane
  // for plane), and a 1024^3 grid is sampled in a fraction of a second instead of many seconds
  // (first touch included: HostArray).
  template <class F>
  HostArray<double> sample_points(F&& f) const {
    HostArray<double> v(points());
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nk; ++k)
      for (int j = 0; j < p.ny; ++j)
        for (int i = 0; i < p.nx; ++i) v[at(i, j, k)] = f(i, j, k0 + k);
    return v;
  }
  // f of each point's coordinates.
  template <class F>
  HostArray<double> sample(F&& f) const {
    return sample_points([&](int i, int j, int k) { return f(coord(0, i), coord(1, j), coord(2, k)); });
  }

  // A Gaussian of standard deviation `width` centred in the domain, on a background. exp(-r^2 /
  // 2 w^2) is the product of one factor per axis: an exp per point of each axis, not per point of
  // the grid (at 512^3 the exps took most of the state's 0.2 s on 16 threads).
  HostArray<double> gaussian(double width, double amplitude, double background) const {
    const double s2 = 2 * width * width;
    auto factors = [&](int a) {
      std::vector<double> f(std::size_t(n(a)));
      for (int i = 0; i < n(a); ++i) {
        const double d = coord(a, i) - extent(a) / 2;
        f[std::size_t(i)] = std::exp(-d * d / s2);
      }
      return f;
    };
    const std::vector<double> fx = factors(0), fy = factors(1), fz = factors(2);
    return sample_points([&](int i, int j, int k) {
      return background + amplitude * (fx[std::size_t(i)] * fy[std::size_t(j)] * fz[std::size_t(k)]);
    });
  }

  // f(u, the engines' discrete Laplacian of u) at every point of an interior field. A neighbour
  // past a face is what the host halo fill puts there (halo_image: the periodic image, or the
  // boundary value), read from u itself: no padded copy of the grid. Points whose neighbours all
  // lie inside (every point but those within R of a face) read them at fixed strides instead, the
  // same values without the images' index arithmetic (512^3, R = 4, 16 host cores: the initial
  // state 0.55-0.58 s with it for every neighbour, 0.34-0.39 s without).
  template <class F>
  HostArray<double> with_laplacian(const HostArray<double>& u, F&& f) const {
    const double edge = p.field_boundary_value(0);
    const StencilCoeffs<double> cf = make_laplacian_coeffs<double>(p.radius, p.h[0], p.h[1], p.h[2]);
    const std::ptrdiff_t stride[3] = {1, p.nx, std::ptrdiff_t(p.nx) * p.ny};
    HostArray<double> out(u.size());
    auto sweep = [&](auto radius) {
      constexpr int R = decltype(radius)::value;
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j) {
          auto near_face = [&](int i) {
            auto neighbour = [&](int a, int o) {
              int q[3] = {i, j, k};
              q[a] = halo_image(q[a] + o, n(a), p.boundary);
              return q[a] < 0 ? edge : u[at(q[0], q[1], q[2])];
            };
            const double uq = u[at(i, j, k)];
            out[at(i, j, k)] = f(uq, laplacian<R>(cf, uq, neighbour));
          };
          // Points [lo, hi) of the row have every neighbour inside.
          const bool inside = k >= R && k < p.nz - R && j >= R && j < p.ny - R;
          const int lo = inside ? std::min(R, p.nx) : p.nx, hi = std::max(lo, p.nx - R);
          for (int i = 0; i < lo; ++i) near_face(i);
          const double* const row = u.data() + at(0, j, k);
          double* const orow = out.data() + at(0, j, k);
          for (int i = lo; i < hi; ++i) {
            const double* const c = row + i;
            orow[i] = f(*c, laplacian<R>(cf, *c, [&](int a, int o) { return c[o * stride[a]]; }));
          }
          for (int i = hi; i < p.nx; ++i) near_face(i);
        }
    };
    switch (p.radius) {
      case 1:
        sweep(std::integral_constant<int, 1>{});
        break;
      case 2:
        sweep(std::integral_constant<int, 2>{});
        break;
      case 3:
        sweep(std::integral_constant<int, 3>{});
        break;
      case 4:
        sweep(std::integral_constant<int, 4>{});
        break;
      default:
        throw Error("stencil radius must be 1..4, not " + std::to_string(p.radius));
    }
    return out;
  }
};

// The state of one or two arrays (moved in: no copy of a gigabyte).
InitialState one(HostArray<double> a) {
  InitialState s;
  s.fields.push_back(std::move(a));
  return s;
}
InitialState two(HostArray<double> a, HostArray<double> b) {
  InitialState s = one(std::move(a));
  s.fields.push_back(std::move(b));
  return s;
}

// Heat: a Gaussian pulse on a background.
InitialState initial(equations::Heat, const Case& c, const Grid& g, double) {
  return one(
      g.gaussian(c.get_float("heat.pulse_width"), c.get_float("heat.amplitude"), c.get_float("heat.background")));
}

// Wave: u(0) and u(-dt).
InitialState initial(equations::Wave, const Case& c, const Grid& g, double dt) {
  const StencilProblem& p = g.p;
  const double speed = p.constants<equations::Wave>().speed;
  const std::string init = c.get_string("wave.initial");
  if (init == "source") {  // at rest, zero, driven by the point source (point_source)
    auto zero = [](double, double, double) { return 0.0; };
    return two(g.sample(zero), g.sample(zero));
  }
  if (init == "pulse") {
    // At rest at t = 0: u(-dt) = u + (c dt)^2 / 2 lap u (Taylor, u_t = 0, u_tt = c^2 lap u). Leaving
    // u(-dt) = u would put the rest at t = -dt/2: an error of first order in dt. The Laplacian
    // needs the neighbours: the whole grid (initial_state takes the slab).
    const Grid w = g.whole();
    HostArray<double> u = w.gaussian(c.get_float("wave.pulse_width"), 1.0, 0.0);
    const double half_c2dt2 = 0.5 * speed * speed * dt * dt;
    HostArray<double> prev = w.with_laplacian(u, [&](double uq, double lap) { return uq + half_c2dt2 * lap; });
    return two(std::move(u), std::move(prev));
  }
  // Standing: sin(kx x) sin(ky y) sin(kz z) cos(w t): u(0) and u(-dt) exactly.
  const double m = double(c.get_int("wave.mode"));
  const double k = 2 * std::numbers::pi * m;  // (2 pi m) / L per axis
  const double kx = k / g.extent(0), ky = k / g.extent(1), kz = k / g.extent(2);
  const double w = speed * std::sqrt(kx * kx + ky * ky + kz * kz);
  auto mode_shape = [&](double x, double y, double z) {
    return std::sin(kx * x) * std::sin(ky * y) * std::sin(kz * z);
  };
  const double cwdt = std::cos(w * dt);
  return two(g.sample(mode_shape), g.sample([&](double x, double y, double z) { return mode_shape(x, y, z) * cwdt; }));
}

// Gray-Scott: the unreacted (U, V) = (1, 0) with seed cubes of (0.5, 0.25), or noise everywhere;
// uniform noise on both, clamped to [0, 1]. Every point draws its own numbers (item: its index in
// the whole grid), each cube its corner, so a slab is made alone and in parallel.
InitialState initial(equations::GrayScott, const Case& c, const Grid& g, double) {
  const StencilProblem& p = g.p;
  const auto seed = std::uint64_t(c.get_int("run.seed"));
  const double noise = c.get_float("gray_scott.noise");
  const bool cubes = c.get_string("gray_scott.seed") == "cubes";
  const int e = cubes ? int(c.get_int("gray_scott.seed_size")) : 0;
  std::vector<std::array<int, 3>> corners;
  for (std::int64_t s = 0; cubes && s < c.get_int("gray_scott.seed_count"); ++s) {
    CounterRandom r(seed, kGrayScottCubeStream, std::uint64_t(s));
    const int x0 = int(r.uniform() * p.nx), y0 = int(r.uniform() * p.ny), z0 = int(r.uniform() * p.nz);
    corners.push_back({x0, y0, z0});
  }
  const Grid whole = g.whole();
  HostArray<double> u(g.points()), v(g.points());
#pragma omp parallel for schedule(static)
  for (int k = 0; k < g.nk; ++k) {
    const int gk = g.k0 + k;
    std::vector<std::array<int, 3>> here;  // the cubes through this plane
    for (const auto& corner : corners)
      if (gk >= corner[2] && gk < corner[2] + e) here.push_back(corner);
    for (int j = 0; j < p.ny; ++j)
      for (int i = 0; i < p.nx; ++i) {
        CounterRandom r(seed, kGrayScottStream, whole.at(i, j, gk));
        double uq = 1.0, vq = 0.0;
        if (!cubes) vq = 0.25 * r.uniform(), uq = 1 - 2 * vq;
        for (const auto& [x0, y0, z0] : here)
          if (i >= x0 && i < x0 + e && j >= y0 && j < y0 + e) uq = 0.5, vq = 0.25;
        const std::size_t q = g.at(i, j, k);
        u[q] = std::clamp(uq + noise * (r.uniform() - 0.5), 0.0, 1.0);
        v[q] = std::clamp(vq + noise * (r.uniform() - 0.5), 0.0, 1.0);
      }
  }
  return two(std::move(u), std::move(v));
}

// Allen-Cahn: uniform noise in [-a, a] with its mean removed (equal shares of the two phases: the
// mean is the fastest-growing mode, rate 1, and any bias would take the whole grid into one phase),
// or a slab of u = 1 between two planar interfaces at
// x = L/4 and 3L/4, u = tanh((x - L/4) / w) - tanh((x - 3L/4) / w) - 1, w = sqrt(2) eps: each
// interface the stationary profile (the other's tail is 2 exp(-L / (2 w)) at most, 4e-8 at
// L = 1, eps = 0.02). The noise of a point is its own draw (item: its index in the grid); the
// mean is the whole grid's: every plane is drawn and summed (plane sums added in plane order), the
// slab's planes kept, so a slab is made alone and holds the whole grid's values.
InitialState initial(equations::AllenCahn, const Case& c, const Grid& g, double) {
  const StencilProblem& p = g.p;
  if (c.get_string("allen_cahn.initial") == "slab") {
    const double w = std::sqrt(2.0) * p.constants<equations::AllenCahn>().epsilon, L = g.extent(0);
    return one(g.sample(
        [&](double x, double, double) { return std::tanh((x - L / 4) / w) - std::tanh((x - 3 * L / 4) / w) - 1; }));
  }
  const auto seed = std::uint64_t(c.get_int("run.seed"));
  const double a = c.get_float("allen_cahn.noise");
  const Grid whole = g.whole();
  HostArray<double> u(g.points());
  std::vector<double> sums(std::size_t(p.nz), 0.0);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < p.nz; ++k) {
    const bool mine = k >= g.k0 && k < g.k0 + g.nk;
    double sum = 0;
    for (int j = 0; j < p.ny; ++j)
      for (int i = 0; i < p.nx; ++i) {
        CounterRandom r(seed, kAllenCahnStream, whole.at(i, j, k));
        const double x = a * (2 * r.uniform() - 1);
        if (mine) u[g.at(i, j, k - g.k0)] = x;
        sum += x;
      }
    sums[std::size_t(k)] = sum;
  }
  double mean = 0;
  for (const double sum : sums) mean += sum;
  mean /= double(whole.points());
  const long long n = (long long)u.size();
#pragma omp parallel for schedule(static)
  for (long long q = 0; q < n; ++q) u[std::size_t(q)] -= mean;
  return one(std::move(u));
}

}  // namespace

std::optional<PointSource> point_source(const Case& c, const StencilProblem& p) {
  if (p.equation != Equation::Wave || c.get_string("wave.initial") != "source") return std::nullopt;
  const double fr[3] = {c.get_float("wave.source_x"), c.get_float("wave.source_y"), c.get_float("wave.source_z")};
  const int n[3] = {p.nx, p.ny, p.nz};
  PointSource s;
  for (int a = 0; a < 3; ++a) s.at[a] = std::min(n[a] - 1, int(fr[a] * n[a]));
  s.frequency = c.get_float("wave.source_frequency");
  s.delay = c.get_float("wave.source_delay") > 0 ? c.get_float("wave.source_delay") : 1.2 / s.frequency;
  s.amplitude = c.get_float("wave.source_amplitude");
  return s;
}

bool initial_state_needs_whole_grid(const Case& c, Equation equation) {
  return equation == Equation::Wave && c.get_string("wave.initial") == "pulse";
}

InitialState initial_state(const Case& c, const StencilProblem& p, double dt, int z0, int nz) {
  if (nz < 0) z0 = 0, nz = p.nz;
  if (z0 < 0 || z0 + nz > p.nz) throw Error("initial conditions: planes outside the grid");
  const Grid g{p, z0, nz};
  InitialState s = with_equation(p.equation, [&](auto eq) { return initial(eq, c, g, dt); });
  if (int(s.fields.size()) != stencil_field_count(p.equation))
    throw Error(std::string("initial conditions of ") + name(p.equation) + ": " + std::to_string(s.fields.size()) +
                " arrays for a state of " + std::to_string(stencil_field_count(p.equation)));
  // What could only be made on the whole grid (random values drawn in order, a Laplacian) is cut
  // to the planes asked for: contiguous, x fastest, then y, then z.
  const std::size_t plane = std::size_t(p.nx) * std::size_t(p.ny);
  for (auto& f : s.fields) {
    if (f.size() == g.points()) continue;
    if (f.size() != std::size_t(p.points()))
      throw Error(std::string("initial conditions of ") + name(p.equation) + ": an array of " +
                  std::to_string(f.size()) + " values");
    f = HostArray<double>(f.begin() + std::ptrdiff_t(plane * std::size_t(z0)),
                          f.begin() + std::ptrdiff_t(plane * std::size_t(z0 + nz)));
  }
  return s;
}

}  // namespace tiersim
