// The CPU (OpenMP) stencil backend: the reference the CUDA kernels are tested against, and the
// fallback without a GPU. One engine per listed equation (kernels/physics/equations.hpp), with the
// same point updates and Laplacian as the kernels.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/halo_exchange.hpp"
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

template <class T, class Eq>
class StencilCpu final : public StencilEngine {
  static constexpr int kFields = Eq::kFields;
  static constexpr int kStateFields = int(Eq::kStateNames.size());

 public:
  StencilCpu(const Strategy& s, const StencilProblem& p) : p_(p), s_(s) {
    c_ = make_laplacian_coeffs<T>(p.radius, p.h[0], p.h[1], p.h[2]);
    for (int f = 0; f < kStateFields; ++f) cur_.emplace_back(p.nx, p.ny, p.nz, p.radius);
    if constexpr (!Eq::kPreviousLevel)  // with one, u(t+dt) is written over u(t-dt)
      for (int f = 0; f < kFields; ++f) nxt_.emplace_back(p.nx, p.ny, p.nz, p.radius);
  }

  const StencilProblem& problem() const override { return p_; }

  using StencilEngine::upload;
  void upload(int field, const double* v, std::size_t n) override {
    check_field(field, n);
    cur_[field].set_interior(v);
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
    auto t0 = Clock::now();
    for (int f = 0; f < kFields; ++f) fill_halo(cur_[f].view(), p_.field_boundary_value(f));
    const double halo = double(kFields) * double(halo_points(p_.nx, p_.ny, p_.nz, p_.radius, p_.local_z_sides()));
    record("stencil_halo_cpu", t0, halo * 2 * sizeof(T), 0, halo);
    if (p_.z_split()) exchange_halos(0, kFields);
    t0 = Clock::now();
    switch (p_.radius) {
      case 1:
        update<1>(dt);
        break;
      case 2:
        update<2>(dt);
        break;
      case 3:
        update<3>(dt);
        break;
      case 4:
        update<4>(dt);
        break;
      default:
        throw Error("stencil radius must be 1..4, not " + std::to_string(p_.radius));
    }
    record(std::string("stencil_") + Eq::kKernelTag + "_cpu", t0, stencil_compulsory_bytes(p_, sizeof(T)),
           stencil_flops_per_point(p_) * double(p_.points()), double(p_.points()));
    if constexpr (Eq::kPreviousLevel)
      std::swap(cur_[0], cur_[1]);
    else
      for (int f = 0; f < kFields; ++f) std::swap(cur_[f], nxt_[f]);
  }

  void add_point_value(int i, int j, int k, double value) override { cur_[0].view()(i, j, k) += T(value); }

  FieldStats stats(int field) override {
    check_field(field, std::size_t(p_.points()));
    const GridView<T> g = cur_[field].view();
    double sum = 0, sq = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
    std::int64_t bad = 0, first = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel for collapse(2) reduction(+ : sum, sq, bad) reduction(min : mn, first) reduction(max : mx) \
    schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j) {
        const T* row = g.row(j, k);
        for (int i = 0; i < g.nx; ++i) {
          const double v = row[i];
          sum += v, sq += v * v, mn = std::min(mn, v), mx = std::max(mx, v);
          if (!std::isfinite(v)) {
            ++bad;
            first = std::min(first, (std::int64_t(k) * g.ny + j) * g.nx + i);
          }
        }
      }
    return {sum, sq, mn, mx, bad, bad > 0 ? first : -1};
  }

  double wave_energy(double dt) override {
    if constexpr (std::is_same_v<Eq, equations::Wave>) {
      fill_halo(cur_[1].view(), p_.field_boundary_value(1));  // u_prev's: the last step filled u's only
      if (p_.z_split()) exchange_halos(1, 1);
      switch (p_.radius) {
        case 1:
          return energy<1>(dt);
        case 2:
          return energy<2>(dt);
        case 3:
          return energy<3>(dt);
        case 4:
          return energy<4>(dt);
        default:
          throw Error("stencil radius must be 1..4, not " + std::to_string(p_.radius));
      }
    } else {
      (void)dt;
      return 0;
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
  // On a grid split into z slabs the z pass fills only the faces without a neighbour
  // (local_z_sides); exchange_halos brings the others.
  void fill_halo(const GridView<T>& g, double boundary_value) const {
    const T value = T(boundary_value);
    const int z_sides = p_.local_z_sides();
    const bool parallel = halo_points(g.nx, g.ny, g.nz, g.r, z_sides) > (1 << 17);
#pragma omp parallel if (parallel)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        if (axis == 2 && !(z_sides >> side & 1)) continue;
        const HaloBox b = halo_box(axis, side, g.nx, g.ny, g.nz, g.r);
#pragma omp for schedule(static)
        for (int k = b.lo[2]; k < b.hi[2]; ++k) {
          HaloBox slab = b;
          slab.lo[2] = k, slab.hi[2] = k + 1;
          fill_halo_box(g, axis, slab, p_.boundary, value);
        }
      }
  }

  // The z pass of fields [first, first + count) from the neighbouring ranks (after fill_halo).
  void exchange_halos(int first, int count) {
    std::vector<ZHaloPlanes> planes;
    for (int f = first; f < first + count; ++f) {
      const HostGrid<T>& g = cur_[std::size_t(f)];
      T* base = g.data();
      const GridSpec<T>& sp = g.spec();
      planes.push_back({base + sp.plane_start(0), base + sp.plane_start(sp.nz - sp.r), base + sp.plane_start(-sp.r),
                        base + sp.plane_start(sp.nz)});
    }
    const std::size_t bytes = std::size_t(p_.radius) * std::size_t(cur_[0].spec().plane()) * sizeof(T);
    records_.push_back(exchange_z_halos(p_, planes, bytes, strategy_name()));
  }

  // u(t + dt) of every field from the fields' values and Laplacians at t (and, with a previous
  // level, u(t - dt), read from the buffer the update overwrites).
  template <int R>
  void update(double dt) {
    const typename Eq::template Params<T> prm = Eq::template params<T>(p_.template constants<Eq>(), dt);
    GridView<T> in[kFields], out[kFields];
    for (int f = 0; f < kFields; ++f) {
      in[f] = cur_[f].view();
      out[f] = Eq::kPreviousLevel ? cur_[1].view() : nxt_[f].view();
    }
    const GridView<T> u = in[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < u.nz; ++k)
      for (int j = 0; j < u.ny; ++j) {
        const T* ir[kFields];
        T* orow[kFields];
        for (int f = 0; f < kFields; ++f) ir[f] = in[f].row(j, k), orow[f] = out[f].row(j, k);
        for (int i = 0; i < u.nx; ++i) {
          T c[kFields], lap[kFields], o[kFields];
          for (int f = 0; f < kFields; ++f) c[f] = ir[f][i], lap[f] = lap_at<R>(c_, in[f], i, j, k);
          const T u_prev = Eq::kPreviousLevel ? orow[0][i] : T(0);
          Eq::update(prm, c, lap, u_prev, o);
          for (int f = 0; f < kFields; ++f) orow[f][i] = o[f];
        }
      }
  }

  template <int R>
  double energy(double dt) const {
    const GridView<T> u = cur_[0].view(), prev = cur_[1].view();
    const double c = p_.template constants<equations::Wave>().speed, c2 = c * c, inv_dt = 1 / dt;
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
  return with_equation(p.equation, [&](auto eq) -> std::unique_ptr<StencilEngine> {
    using Eq = decltype(eq);
    if (s.precision == Precision::Fp64) return std::make_unique<StencilCpu<double, Eq>>(s, p);
    return std::make_unique<StencilCpu<float, Eq>>(s, p);
  });
}

}  // namespace tiersim
