// The CPU (OpenMP) stencil backend: the reference the CUDA kernels are tested against, and the
// fallback without a GPU. Same point updates (kernels/physics/stencil.hpp) as the kernels.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/stencil_engine.hpp"

namespace tiersim {
namespace {

using Clock = std::chrono::steady_clock;

template <int R, class T>
inline T lap_at(const StencilCoeffs<T>& c, const GridView<T>& g, int i, int j, int k) {
  const T* p = &g(i, j, k);
  const std::ptrdiff_t sy = g.sy, sz = g.sz;
  return laplacian<R>(c, p[0], [&](int axis, int off) {
    return axis == 0 ? p[off] : axis == 1 ? p[off * sy] : p[off * sz];
  });
}

template <class T>
class StencilCpu final : public StencilEngine {
 public:
  StencilCpu(const Strategy& s, const StencilProblem& p) : p_(p), s_(s) {
    c_ = make_laplacian_coeffs<T>(p.radius, p.h[0], p.h[1], p.h[2]);
    const int nf = stencil_field_count(p.equation);
    for (int f = 0; f < nf; ++f) cur_.emplace_back(p.nx, p.ny, p.nz, p.radius);
    if (p.equation != Equation::Wave)  // wave writes u(t+dt) over u(t-dt)
      for (int f = 0; f < nf; ++f) nxt_.emplace_back(p.nx, p.ny, p.nz, p.radius);
  }

  const StencilProblem& problem() const override { return p_; }

  void upload(int field, const std::vector<double>& v) override {
    check_field(field, v.size());
    cur_[field].set_interior(v.data());
  }
  std::vector<double> download(int field) override {
    check_field(field, std::size_t(p_.points()));
    std::vector<double> v(std::size_t(p_.points()));
    cur_[field].get_interior(v.data());
    return v;
  }

  std::unique_ptr<CopyInFlight> stage(int field, void* dst) override {
    check_field(field, std::size_t(p_.points()));
    cur_[field].get_interior(static_cast<T*>(dst));
    return std::make_unique<CopyDone>();
  }

  void step(double dt) override {
    const int ns = p_.equation == Equation::GrayScott ? 2 : 1;  // fields the stencil reads
    auto t0 = Clock::now();
    for (int f = 0; f < ns; ++f) fill_halo(cur_[f].view(), p_.field_boundary_value(f));
    record("stencil_halo_cpu", t0, double(ns) * halo_points(p_.nx, p_.ny, p_.nz, p_.radius) * 2 * sizeof(T), 0,
           double(ns) * halo_points(p_.nx, p_.ny, p_.nz, p_.radius));
    t0 = Clock::now();
    switch (p_.radius) {
      case 1: update<1>(dt); break;
      case 2: update<2>(dt); break;
      case 3: update<3>(dt); break;
      default: update<4>(dt); break;
    }
    const double bytes = stencil_compulsory_bytes(p_, sizeof(T));
    record(std::string("stencil_") + (p_.equation == Equation::GrayScott ? "gray_scott" : name(p_.equation)) + "_cpu",
           t0, bytes, stencil_flops_per_point(p_) * double(p_.points()), double(p_.points()));
    if (p_.equation == Equation::Wave) std::swap(cur_[0], cur_[1]);
    else
      for (int f = 0; f < ns; ++f) std::swap(cur_[f], nxt_[f]);
  }

  void add_point_value(int i, int j, int k, double value) override { cur_[0].view()(i, j, k) += T(value); }

  FieldStats stats(int field) override {
    check_field(field, std::size_t(p_.points()));
    const GridView<T> g = cur_[field].view();
    double sum = 0, sq = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
#pragma omp parallel for collapse(2) reduction(+ : sum, sq) reduction(min : mn) reduction(max : mx) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j) {
        const T* row = g.row(j, k);
        for (int i = 0; i < g.nx; ++i) {
          const double v = row[i];
          sum += v, sq += v * v, mn = std::min(mn, v), mx = std::max(mx, v);
        }
      }
    return {sum, sq, mn, mx};
  }

  double wave_energy(double dt) override {
    if (p_.equation != Equation::Wave) return 0;
    fill_halo(cur_[1].view(), p_.field_boundary_value(1));  // u_prev's: the last step filled u's only
    switch (p_.radius) {
      case 1: return energy<1>(dt);
      case 2: return energy<2>(dt);
      case 3: return energy<3>(dt);
      default: return energy<4>(dt);
    }
  }

  std::vector<KernelRecord> take_records(bool) override { return std::exchange(records_, {}); }
  std::string strategy_name() const override { return std::string("cpu/") + name(s_.precision); }

 private:
  void check_field(int field, std::size_t n) const {
    if (field < 0 || field >= int(cur_.size())) throw Error("stencil: no field " + std::to_string(field));
    if (n != std::size_t(p_.points()))
      throw Error("stencil: field of " + std::to_string(n) + " values for a grid of " + std::to_string(p_.points()));
  }

  // One parallel region for the three passes (threads split the planes of each box); the
  // barrier after each axis keeps the passes in order, since edges and corners read the
  // earlier passes. Small halos are filled serially: a parallel region costs more than they do.
  void fill_halo(const GridView<T>& g, double boundary_value) const {
    const T value = T(boundary_value);
    const bool parallel = halo_points(g.nx, g.ny, g.nz, g.r) > (1 << 17);
#pragma omp parallel if (parallel)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        const HaloBox b = halo_box(axis, side, g.nx, g.ny, g.nz, g.r);
#pragma omp for schedule(static)
        for (int k = b.lo[2]; k < b.hi[2]; ++k) {
          HaloBox slab = b;
          slab.lo[2] = k, slab.hi[2] = k + 1;
          fill_halo_box(g, axis, slab, p_.boundary, value);
        }
      }
  }

  template <int R>
  void update(double dt) {
    const GridView<T> u = cur_[0].view();
    if (p_.equation == Equation::Heat) {
      const GridView<T> out = nxt_[0].view();
      const HeatParams<T> hp{T(dt * p_.diffusivity)};
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < u.nz; ++k)
        for (int j = 0; j < u.ny; ++j) {
          T* o = out.row(j, k);
          const T* in = u.row(j, k);
          for (int i = 0; i < u.nx; ++i) o[i] = heat_update(in[i], lap_at<R>(c_, u, i, j, k), hp);
        }
    } else if (p_.equation == Equation::Wave) {
      const GridView<T> prev = cur_[1].view();  // overwritten in place with u(t + dt)
      const WaveParams<T> wp{T(p_.speed * p_.speed * dt * dt)};
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < u.nz; ++k)
        for (int j = 0; j < u.ny; ++j) {
          T* o = prev.row(j, k);
          const T* in = u.row(j, k);
          for (int i = 0; i < u.nx; ++i) o[i] = wave_update(in[i], o[i], lap_at<R>(c_, u, i, j, k), wp);
        }
    } else {
      const GridView<T> v = cur_[1].view(), uo = nxt_[0].view(), vo = nxt_[1].view();
      const GrayScottParams<T> gp{T(dt), T(p_.du), T(p_.dv), T(p_.feed), T(p_.kill)};
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < u.nz; ++k)
        for (int j = 0; j < u.ny; ++j) {
          const T *ur = u.row(j, k), *vr = v.row(j, k);
          T *uor = uo.row(j, k), *vor = vo.row(j, k);
          for (int i = 0; i < u.nx; ++i)
            gray_scott_update(ur[i], vr[i], lap_at<R>(c_, u, i, j, k), lap_at<R>(c_, v, i, j, k), gp, uor[i], vor[i]);
        }
    }
  }

  template <int R>
  double energy(double dt) const {
    const GridView<T> u = cur_[0].view(), prev = cur_[1].view();
    const double c2 = p_.speed * p_.speed, inv_dt = 1 / dt;
    double e = 0;
#pragma omp parallel for collapse(2) reduction(+ : e) schedule(static)
    for (int k = 0; k < u.nz; ++k)
      for (int j = 0; j < u.ny; ++j)
        for (int i = 0; i < u.nx; ++i) {
          const double un = u(i, j, k), up = prev(i, j, k);
          const double vel = (un - up) * inv_dt;
          e += 0.5 * vel * vel - 0.5 * c2 * un * double(lap_at<R>(c_, prev, i, j, k));
        }
    return e;
  }

  void record(const std::string& kernel, Clock::time_point t0, double bytes, double flops, double work) {
    KernelRecord r;
    r.kernel = kernel;
    r.strategy = strategy_name();
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.bytes_compulsory = bytes;
    r.bytes_modelled = bytes;  // caches catch the neighbour re-reads (rows and planes fit)
    r.flops = flops;
    r.work = work;
    r.work_unit = "points";
    records_.push_back(std::move(r));
  }

  StencilProblem p_;
  Strategy s_;
  StencilCoeffs<T> c_;
  std::vector<HostGrid<T>> cur_, nxt_;
  std::vector<KernelRecord> records_;
};

}  // namespace

std::unique_ptr<StencilEngine> make_stencil_cpu(const Strategy& s, const StencilProblem& p) {
  if (s.precision == Precision::Fp64) return std::make_unique<StencilCpu<double>>(s, p);
  return std::make_unique<StencilCpu<float>>(s, p);
}

}  // namespace tiersim
