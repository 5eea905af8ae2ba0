// The OpenMP N-body backend: the reference the CUDA kernels are checked against, and the
// fallback on machines without a GPU. Same physics functions (kernels/physics/gravity.hpp),
// same views; each body's force is summed in index order, so results do not depend on the
// number of threads.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"

namespace tiersim {
namespace {

template <class View>
class CpuNbodyEngine final : public NbodyEngine {
  using T = typename View::scalar;

 public:
  CpuNbodyEngine(const Strategy& s, int n, const NbodyParams& p)
      : store_(n), params_(p), strategy_(std::string("cpu/") + name(s.layout) + "/" + name(s.precision)) {}

  int size() const override { return store_.size(); }
  void upload(const Bodies& b) override { store_bodies(b, store_.view()); }
  Bodies download() override { return load_bodies(store_.view()); }
  std::string strategy_name() const override { return strategy_; }

  void compute_forces() override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const int n = v.n;
    const T eps2 = T(force_eps2(params_.softening));
    const T G = T(params_.G);
    // Blocks of kBlock bodies i; for each j the block's interactions run as SIMD lanes. Each
    // body's sum still runs over j in order, so the result is the same for any thread count.
    constexpr int kBlock = 16;
#pragma omp parallel for schedule(static)
    for (int i0 = 0; i0 < n; i0 += kBlock) {
      const int m = std::min(kBlock, n - i0);
      T px[kBlock], py[kBlock], pz[kBlock], ax[kBlock] = {}, ay[kBlock] = {}, az[kBlock] = {};
      for (int k = 0; k < kBlock; ++k) {
        const Vec3<T> p = v.pos(i0 + std::min(k, m - 1));
        px[k] = p.x, py[k] = p.y, pz[k] = p.z;
      }
      for (int j = 0; j < n; ++j) {
        const Vec4<T> q = v.pos_mass(j);
#pragma omp simd
        for (int k = 0; k < kBlock; ++k) {
          Vec3<T> a{ax[k], ay[k], az[k]};
          accumulate_pair(Vec3<T>{px[k], py[k], pz[k]}, q, eps2, a);
          ax[k] = a.x, ay[k] = a.y, az[k] = a.z;
        }
      }
      for (int k = 0; k < m; ++k) v.set_acc(i0 + k, G * Vec3<T>{ax[k], ay[k], az[k]});
    }
    const double nn = double(n) * n;
    record("nbody_forces", t0, n * (4.0 + 3.0) * sizeof(T), n * (4.0 + 3.0) * sizeof(T),
           kFlopsPerInteraction * nn, nn, "interactions");
  }

  void kick(double dt) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const T h = T(dt);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < v.n; ++i) v.set_vel(i, tiersim::kick(v.vel(i), v.acc(i), h));
    const double bytes = v.n * 9.0 * sizeof(T);  // read v and a, write v
    record("nbody_kick", t0, bytes, bytes, 6.0 * v.n, v.n, "bodies");
  }

  void drift(double dt) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const T h = T(dt);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < v.n; ++i) v.set_pos(i, tiersim::drift(v.pos(i), v.vel(i), h));
    const double bytes = v.n * 9.0 * sizeof(T);  // read x and v, write x
    record("nbody_drift", t0, bytes, bytes, 6.0 * v.n, v.n, "bodies");
  }

  NbodyDiagnostics diagnostics() override {
    const View v = store_.view();
    const int n = v.n;
    const double eps2 = params_.softening * params_.softening;
    NbodyDiagnostics d;
    double kin = 0, pot = 0, mass = 0, px = 0, py = 0, pz = 0, lx = 0, ly = 0, lz = 0;
    // Double precision throughout: the diagnostics judge the integration, they must not add error.
#pragma omp parallel for schedule(static) reduction(+ : kin, pot, mass, px, py, pz, lx, ly, lz)
    for (int i = 0; i < n; ++i) {
      const auto p = v.pos(i), u = v.vel(i);
      const Vec3<double> x{p.x, p.y, p.z}, w{u.x, u.y, u.z};
      const double m = v.mass(i);
      kin += 0.5 * m * dot(w, w);
      mass += m;
      px += m * w.x, py += m * w.y, pz += m * w.z;
      const Vec3<double> l = cross(x, w);
      lx += m * l.x, ly += m * l.y, lz += m * l.z;
      double phi = 0;
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        const auto q = v.pos_mass(j);
        phi += pair_potential<double>(x, {q.x, q.y, q.z, q.w}, eps2);
      }
      pot += 0.5 * m * phi;
    }
    d.kinetic = kin;
    d.potential = params_.G * pot;
    d.mass = mass;
    d.momentum = {px, py, pz};
    d.angular_momentum = {lx, ly, lz};
    return d;
  }

  std::vector<KernelRecord> take_records(bool) override { return std::exchange(records_, {}); }

 private:
  using clock = std::chrono::steady_clock;
  void record(const char* kernel, clock::time_point t0, double compulsory, double modelled, double flops,
              double work, const char* unit) {
    KernelRecord r;
    r.kernel = kernel;
    r.strategy = strategy_;
    r.ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    r.bytes_compulsory = compulsory;
    r.bytes_modelled = modelled;
    r.flops = flops;
    r.work = work;
    r.work_unit = unit;
    records_.push_back(std::move(r));
  }

  HostParticleStore<View> store_;
  NbodyParams params_;
  std::string strategy_;
  std::vector<KernelRecord> records_;
};

}  // namespace

std::unique_ptr<NbodyEngine> make_nbody_cpu(const Strategy& s, int n, const NbodyParams& p) {
  return with_layout_and_scalar(s.layout, s.precision, [&](auto layout, auto scalar) -> std::unique_ptr<NbodyEngine> {
    using View = ParticleView<decltype(layout)::value, typename decltype(scalar)::type>;
    return std::make_unique<CpuNbodyEngine<View>>(s, n, p);
  });
}

}  // namespace tiersim
