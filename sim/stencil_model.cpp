// The stencil model: a 3D grid with halos, one of three equations (heat, wave, Gray-Scott),
// advanced by a backend engine (CPU reference or CUDA kernels).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <type_traits>

#include "io/checkpoint.hpp"
#include "io/snapshots.hpp"
#include "kernels/stencil_engine.hpp"
#include "sim/model.hpp"

namespace tiersim {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

StencilProblem problem_from_case(const Case& c) {
  StencilProblem p;
  p.equation = parse_equation(c.get_string("stencil.equation"));
  const int n = int(c.get_int("grid.n"));
  p.nx = c.get_int("grid.nx") > 0 ? int(c.get_int("grid.nx")) : n;
  p.ny = c.get_int("grid.ny") > 0 ? int(c.get_int("grid.ny")) : n;
  p.nz = c.get_int("grid.nz") > 0 ? int(c.get_int("grid.nz")) : n;
  p.radius = int(c.get_int("grid.radius"));
  p.h[0] = c.get_float("grid.length") / p.nx;
  p.h[1] = c.get_float("grid.hy") > 0 ? c.get_float("grid.hy") : p.h[0];
  p.h[2] = c.get_float("grid.hz") > 0 ? c.get_float("grid.hz") : p.h[0];
  p.boundary = c.get_string("grid.boundary") == "fixed" ? Boundary::Fixed : Boundary::Periodic;
  p.boundary_value = c.get_float("grid.boundary_value");
  if (p.equation == Equation::GrayScott) {
    // U and V need different values (the reservoir (1, 0) by default): one value for both drains U
    // (0) or feeds V without bound (1).
    if (p.boundary == Boundary::Fixed && p.boundary_value != 0)
      throw Error("grid.boundary_value = " + fmt(p.boundary_value) +
                  " does not apply to gray-scott: its fixed boundaries hold gray_scott.boundary_u for U and "
                  "gray_scott.boundary_v for V");
    p.boundary_value = c.get_float("gray_scott.boundary_u");
    p.boundary_value_v = c.get_float("gray_scott.boundary_v");
  }
  p.diffusivity = c.get_float("heat.diffusivity");
  p.speed = c.get_float("wave.speed");
  p.du = c.get_float("gray_scott.du");
  p.dv = c.get_float("gray_scott.dv");
  p.feed = c.get_float("gray_scott.feed");
  p.kill = c.get_float("gray_scott.kill");
  return p;
}

double stability_limit(const StencilProblem& p, std::string* what) {
  const double rho = laplacian_spectral_radius(p.radius, p.h[0], p.h[1], p.h[2]);
  switch (p.equation) {
    case Equation::Heat:
      *what = "heat, forward Euler: dt <= 2 / (D * rho), D = " + fmt(p.diffusivity);
      return heat_dt_limit(rho, p.diffusivity);
    case Equation::Wave:
      *what = "wave, leapfrog: dt <= 2 / (c * sqrt(rho)), c = " + fmt(p.speed);
      return wave_dt_limit(rho, p.speed);
    default:
      *what = "gray-scott, forward Euler with the reaction terms for U, V in [0, 1]: dt <= 2 / max(Du * rho + 1 + F, "
              "Dv * rho + F + k), Du = " +
              fmt(p.du) + ", Dv = " + fmt(p.dv) + ", F = " + fmt(p.feed) + ", k = " + fmt(p.kill);
      return gray_scott_dt_limit(rho, p.du, p.dv, p.feed, p.kill);
  }
}

// A stencil model's staged output: each field's interior in the run's precision.
struct StagedFields final : StagedOutput {
  std::int64_t step = 0;
  double time = 0;
  GridGeometry geometry;
  std::vector<std::string> names;  // the snapshot's fields
  bool fp64 = false;
  std::size_t points = 0;
  std::vector<HostBuffer> buffers;  // one per field the engine holds
  std::vector<std::unique_ptr<CopyInFlight>> copies;
  std::vector<std::pair<std::string, double>> scalars;

  std::vector<KernelRecord> wait() override {
    std::vector<KernelRecord> recs;
    for (auto& c : copies) {
      c->wait();
      if (KernelRecord r = c->record(); !r.kernel.empty()) recs.push_back(std::move(r));
    }
    return recs;
  }
  void write_snapshot(SnapshotFile& out) const override {
    for (std::size_t f = 0; f < names.size(); ++f) {
      if (fp64) out.write_field(step, time, names[f], geometry, buffers[f].as<double>());
      else out.write_field(step, time, names[f], geometry, buffers[f].as<float>());
    }
  }
  ModelState state() const override {
    ModelState st;
    for (std::size_t f = 0; f < buffers.size(); ++f) {
      std::vector<double> v(points);
      if (fp64) std::copy_n(buffers[f].as<double>(), points, v.begin());
      else std::copy_n(buffers[f].as<float>(), points, v.begin());
      st.arrays.emplace_back("field" + std::to_string(f), std::move(v));
    }
    st.scalars = scalars;
    return st;
  }
  double bytes() const override {
    double b = 0;
    for (const auto& h : buffers) b += double(h.bytes());
    return b;
  }
};

class StencilModel final : public Model {
 public:
  StencilModel(const Case& c, Strategy s) : s_(s), p_(problem_from_case(c)), dt_(c.get_float("run.dt")) {
    const int n[3] = {p_.nx, p_.ny, p_.nz};
    for (int a = 0; a < 3; ++a)
      if (p_.boundary == Boundary::Periodic && n[a] < p_.radius)
        throw Error("grid: periodic boundaries need at least grid.radius = " + std::to_string(p_.radius) +
                    " points on every axis (axis " + "xyz"[a] + " has " + std::to_string(n[a]) + ")");
    std::string what;
    const double limit = stability_limit(p_, &what);
    if (dt_ > limit) {
      const std::string why = "run.dt = " + fmt(dt_) + " exceeds the explicit stability limit " + fmt(limit) + " (" +
                              what + ", rho = |Laplacian| max = " +
                              fmt(laplacian_spectral_radius(p_.radius, p_.h[0], p_.h[1], p_.h[2])) + " for R = " +
                              std::to_string(p_.radius) + ")";
      if (!c.get_bool("stencil.force")) throw Error(why + "; lower run.dt or set stencil.force = true");
      forced_ = why;
    }
    if (s_.backend == Backend::Auto) s_.backend = resolve_backend(s_.backend);
    eng_ = s_.backend == Backend::Cuda ? make_stencil_cuda(s_, p_) : make_stencil_cpu(s_, p_);
    initialise(c);
    // Once the run can start (an error before it stays the one line `main` prints).
    if (!forced_.empty())
      std::fprintf(stderr, "tiersim: warning: %s; running anyway (stencil.force = true)\n", forced_.c_str());
    std::ostringstream d;
    d << p_.nx << "x" << p_.ny << "x" << p_.nz << " grid, R = " << p_.radius << " (order " << 2 * p_.radius << "), "
      << (p_.boundary == Boundary::Periodic ? "periodic" : "fixed") << ", " << tiersim::name(p_.equation);
    describe_ = d.str();
  }

  std::string name() const override { return std::string("stencil/") + tiersim::name(p_.equation); }
  std::string strategy_name() const override { return eng_->strategy_name(); }
  std::string describe() const override { return describe_; }

  void step(double dt) override {
    dt_ = dt;
    eng_->step(dt);
    if (source_) {
      // u_tt = c^2 lap u + s(t) delta(x - x_s): leapfrog adds dt^2 s(t_n) / cell volume.
      const double vol = p_.h[0] * p_.h[1] * p_.h[2];
      eng_->add_point_value(src_[0], src_[1], src_[2], src_amp_ * ricker(time_, src_f_, src_t0_) * dt * dt / vol);
    }
    time_ += dt;
  }

  Observables observe() override {
    const double vol = p_.h[0] * p_.h[1] * p_.h[2];
    Observables o;
    if (p_.equation == Equation::Heat) {
      const FieldStats st = eng_->stats(0);
      o = {{"total_heat", st.sum * vol}, {"min", st.min}, {"max", st.max}};
    } else if (p_.equation == Equation::Wave) {
      const FieldStats st = eng_->stats(0);
      o = {{"energy", eng_->wave_energy(dt_) * vol}, {"min", st.min}, {"max", st.max}};
    } else {
      const FieldStats u = eng_->stats(0), v = eng_->stats(1);
      const double np = double(p_.points());
      o = {{"u_mean", u.sum / np}, {"v_mean", v.sum / np}, {"u_min", u.min},
           {"u_max", u.max},       {"v_min", v.min},        {"v_max", v.max}};
    }
    if (!have_q0_) q0_ = o[0].second, have_q0_ = true;
    return o;
  }

  std::pair<std::string, double> conservation(const Observables& now) const override {
    if (p_.equation == Equation::GrayScott) return {"v_mean", now[1].second};
    const double q = now[0].second;
    const char* label = p_.equation == Equation::Heat ? "dQ/Q0" : "dE/E0";
    if (q0_ == 0) return {p_.equation == Equation::Heat ? "Q" : "E", q};
    return {label, (q - q0_) / std::fabs(q0_)};
  }

  std::unique_ptr<StagedOutput> stage_output(std::int64_t step, double time) override {
    auto staged = std::make_unique<StagedFields>();
    staged->step = step, staged->time = time;
    staged->geometry.nx = p_.nx, staged->geometry.ny = p_.ny, staged->geometry.nz = p_.nz;
    for (int a = 0; a < 3; ++a) staged->geometry.spacing[a] = p_.h[a];
    staged->names = p_.equation == Equation::GrayScott ? std::vector<std::string>{"U", "V"} : std::vector<std::string>{"u"};
    staged->fp64 = s_.precision == Precision::Fp64;
    staged->points = std::size_t(p_.points());
    staged->scalars = {{"time", time_}, {"q0", q0_}, {"has_q0", have_q0_ ? 1.0 : 0.0}};
    // Every field the engine holds (the wave equation's previous level too) for the checkpoint;
    // the snapshot writes the first names.size() of them.
    const std::size_t scalar = staged->fp64 ? sizeof(double) : sizeof(float);
    for (int f = 0; f < stencil_field_count(p_.equation); ++f) {
      staged->buffers.emplace_back(staged->points * scalar);
      staged->copies.push_back(eng_->stage(f, staged->buffers.back().data()));
    }
    return staged;
  }

  std::vector<KernelRecord> take_records(bool wait) override {
    std::vector<KernelRecord> recs = eng_->take_records(wait);
    for (const auto& r : recs)
      if (!r.kernel.starts_with("stencil_halo")) update_kernel_ = r.kernel;
    return recs;
  }

  void load_state(const ModelState& st) override {
    const std::string grid =
        "a " + std::to_string(p_.nx) + "x" + std::to_string(p_.ny) + "x" + std::to_string(p_.nz) + " grid";
    const int nf = stencil_field_count(p_.equation);
    std::vector<const std::vector<double>*> fields;
    for (int f = 0; f < nf; ++f)
      fields.push_back(&checked_state_array(st, "field" + std::to_string(f), std::size_t(p_.points()), grid));
    const double time = checked_state_scalar(st, "time"), q0 = checked_state_scalar(st, "q0");
    const bool have_q0 = checked_state_scalar(st, "has_q0") != 0;
    for (int f = 0; f < nf; ++f) eng_->upload(f, *fields[std::size_t(f)]);
    time_ = time;
    q0_ = q0;
    have_q0_ = have_q0;
  }

  // Arrays named as in the snapshots (u; U, V), the wave's previous level u_prev, each written by
  // the update kernel.
  std::vector<NonFinite> find_non_finite() override {
    const std::vector<std::string> names = p_.equation == Equation::Heat   ? std::vector<std::string>{"u"}
                                           : p_.equation == Equation::Wave ? std::vector<std::string>{"u", "u_prev"}
                                                                           : std::vector<std::string>{"U", "V"};
    std::vector<NonFinite> out;
    for (int f = 0; f < stencil_field_count(p_.equation); ++f) {
      const std::vector<double> v = eng_->download(f);
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i])) {
          out.push_back({names[std::size_t(f)], update_kernel(), std::int64_t(i)});
          break;
        }
    }
    return out;
  }

  // The update kernel's telemetry name: as the engine last recorded it (CUDA's depends on the
  // tiling, radius and tuning), or before the first step the name the engine gives it.
  std::string update_kernel() const {
    if (!update_kernel_.empty()) return update_kernel_;
    const std::string eq = p_.equation == Equation::GrayScott ? "gray_scott" : tiersim::name(p_.equation);
    return "stencil_" + eq + "_" +
           (s_.backend == Backend::Cuda ? std::string(tiersim::name(s_.tiling)) + "_r" + std::to_string(p_.radius)
                                        : std::string("cpu"));
  }

  void inject_nan(std::int64_t index) override {
    std::vector<double> v = eng_->download(0);
    v[std::size_t(index) % v.size()] = std::nan("");
    eng_->upload(0, v);
  }

 private:
  // Coordinates of point i along axis a, with the domain centred on L/2.
  double coord(int a, int i) const { return i * p_.h[a]; }
  double extent(int a) const { return (a == 0 ? p_.nx : a == 1 ? p_.ny : p_.nz) * p_.h[a]; }

  template <class F>
  std::vector<double> sample(F&& f) const {
    std::vector<double> v(std::size_t(p_.points()));
    for (int k = 0; k < p_.nz; ++k)
      for (int j = 0; j < p_.ny; ++j)
        for (int i = 0; i < p_.nx; ++i)
          v[(std::size_t(k) * p_.ny + j) * p_.nx + i] = f(coord(0, i), coord(1, j), coord(2, k));
    return v;
  }

  std::vector<double> gaussian(double width, double amplitude, double background) const {
    const double cx = extent(0) / 2, cy = extent(1) / 2, cz = extent(2) / 2, s2 = 2 * width * width;
    return sample([&](double x, double y, double z) {
      const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz);
      return background + amplitude * std::exp(-r2 / s2);
    });
  }

  // The engines' discrete Laplacian of an interior field, on the host (halo from the boundary condition).
  std::vector<double> host_laplacian(const std::vector<double>& u) const {
    HostGrid<double> grid(p_.nx, p_.ny, p_.nz, p_.radius);
    grid.set_interior(u.data());
    const GridView<double> g = grid.view();
    fill_halo_host(g, p_.boundary, p_.field_boundary_value(0));
    const StencilCoeffs<double> cf = make_laplacian_coeffs<double>(p_.radius, p_.h[0], p_.h[1], p_.h[2]);
    std::vector<double> out(u.size());
    auto sweep = [&](auto radius) {
      constexpr int R = decltype(radius)::value;
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < p_.nz; ++k)
        for (int j = 0; j < p_.ny; ++j)
          for (int i = 0; i < p_.nx; ++i)
            out[(std::size_t(k) * p_.ny + j) * p_.nx + i] = laplacian<R>(cf, g(i, j, k), [&](int a, int o) {
              return g(i + (a == 0) * o, j + (a == 1) * o, k + (a == 2) * o);
            });
    };
    switch (p_.radius) {
      case 1: sweep(std::integral_constant<int, 1>{}); break;
      case 2: sweep(std::integral_constant<int, 2>{}); break;
      case 3: sweep(std::integral_constant<int, 3>{}); break;
      default: sweep(std::integral_constant<int, 4>{}); break;
    }
    return out;
  }

  void initialise(const Case& c) {
    if (p_.equation == Equation::Heat) {
      eng_->upload(0, gaussian(c.get_float("heat.pulse_width"), c.get_float("heat.amplitude"),
                               c.get_float("heat.background")));
    } else if (p_.equation == Equation::Wave) {
      const std::string init = c.get_string("wave.initial");
      if (init == "source") {
        const std::vector<double> zero(std::size_t(p_.points()), 0.0);
        eng_->upload(0, zero);
        eng_->upload(1, zero);
        source_ = true;
        const double fr[3] = {c.get_float("wave.source_x"), c.get_float("wave.source_y"), c.get_float("wave.source_z")};
        const int n[3] = {p_.nx, p_.ny, p_.nz};
        for (int a = 0; a < 3; ++a) src_[a] = std::min(n[a] - 1, int(fr[a] * n[a]));
        src_f_ = c.get_float("wave.source_frequency");
        src_t0_ = c.get_float("wave.source_delay") > 0 ? c.get_float("wave.source_delay") : 1.2 / src_f_;
        src_amp_ = c.get_float("wave.source_amplitude");
      } else if (init == "pulse") {
        // At rest at t = 0: u(-dt) = u + (c dt)^2 / 2 lap u (Taylor, u_t = 0, u_tt = c^2 lap u). Leaving
        // u(-dt) = u would put the rest at t = -dt/2: an error of first order in dt.
        const auto u = gaussian(c.get_float("wave.pulse_width"), 1.0, 0.0);
        const auto lap = host_laplacian(u);
        std::vector<double> prev(u.size());
        const double half_c2dt2 = 0.5 * p_.speed * p_.speed * dt_ * dt_;
        for (std::size_t q = 0; q < u.size(); ++q) prev[q] = u[q] + half_c2dt2 * lap[q];
        eng_->upload(0, u);
        eng_->upload(1, prev);
      } else {
        // sin(kx x) sin(ky y) sin(kz z) cos(w t): u(0) and u(-dt) exactly.
        const double m = double(c.get_int("wave.mode"));
        const double kx = 2 * kPi * m / extent(0), ky = 2 * kPi * m / extent(1), kz = 2 * kPi * m / extent(2);
        const double w = p_.speed * std::sqrt(kx * kx + ky * ky + kz * kz);
        auto mode = [&](double x, double y, double z) { return std::sin(kx * x) * std::sin(ky * y) * std::sin(kz * z); };
        auto u = sample(mode);
        eng_->upload(0, u);
        for (auto& x : u) x *= std::cos(w * dt_);
        eng_->upload(1, u);
      }
    } else {
      std::vector<double> u(std::size_t(p_.points()), 1.0), v(std::size_t(p_.points()), 0.0);
      std::mt19937_64 rng(std::uint64_t(c.get_int("run.seed")));
      std::uniform_real_distribution<double> uni(0.0, 1.0);
      const double noise = c.get_float("gray_scott.noise");
      auto at = [&](int i, int j, int k) { return (std::size_t(k) * p_.ny + j) * p_.nx + i; };
      if (c.get_string("gray_scott.seed") == "cubes") {
        const int e = int(c.get_int("gray_scott.seed_size"));
        for (std::int64_t s = 0; s < c.get_int("gray_scott.seed_count"); ++s) {
          const int x0 = int(uni(rng) * p_.nx), y0 = int(uni(rng) * p_.ny), z0 = int(uni(rng) * p_.nz);
          for (int k = z0; k < std::min(p_.nz, z0 + e); ++k)
            for (int j = y0; j < std::min(p_.ny, y0 + e); ++j)
              for (int i = x0; i < std::min(p_.nx, x0 + e); ++i) u[at(i, j, k)] = 0.5, v[at(i, j, k)] = 0.25;
        }
      } else {
        for (std::size_t q = 0; q < v.size(); ++q) v[q] = 0.25 * uni(rng), u[q] = 1 - 2 * v[q];
      }
      for (std::size_t q = 0; q < u.size(); ++q) {
        u[q] = std::clamp(u[q] + noise * (uni(rng) - 0.5), 0.0, 1.0);
        v[q] = std::clamp(v[q] + noise * (uni(rng) - 0.5), 0.0, 1.0);
      }
      eng_->upload(0, u);
      eng_->upload(1, v);
    }
  }

  Strategy s_;
  StencilProblem p_;
  double dt_;
  std::unique_ptr<StencilEngine> eng_;
  std::string describe_;
  std::string forced_;  // why dt is above the limit, when stencil.force let it through
  double time_ = 0;
  bool source_ = false;
  int src_[3] = {0, 0, 0};
  double src_f_ = 0, src_t0_ = 0, src_amp_ = 0;
  bool have_q0_ = false;
  double q0_ = 0;
  std::string update_kernel_;  // as last recorded (take_records)
};

}  // namespace

std::unique_ptr<Model> make_stencil_model(const Case& c, const Strategy& s) {
  if (c.get_string("run.model") != "stencil") throw Error("make_stencil_model: run.model is not stencil");
  return std::make_unique<StencilModel>(c, s);
}

}  // namespace tiersim
