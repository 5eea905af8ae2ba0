// The OpenMP N-body backend: the reference the CUDA kernels are checked against, and the
// fallback on machines without a GPU. Same physics functions (kernels/physics/gravity.hpp),
// same views; each body's force is summed in index order, so results do not depend on the
// number of threads.
//
// Small loops run on one thread. A parallel region costs 2-4 us to fork and join on an idle
// machine, and where the cores are shared (CI, a build next door) the region waits for a
// descheduled thread: with 2 threads on this project's 2-core CI machine under load, kick and
// drift of 2048 bodies took 8-12 ms each against 3.5 us on one thread, and the forces on a Kepler
// binary (2 bodies) 7.7 ms against 1.3 us. Measured there (fp32 SoA, one thread, median): kick
// 3.4 us at 2048 bodies, 17 us at 16384, 67 us at 65536, 0.27 ms at 262144; forces (or the
// potential) 14 us at 64 bodies, 0.22 ms at 256, 0.81 ms at 512, 3.7 ms at 1024.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "kernels/kernel_timing.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"

namespace tiersim {
namespace {

// O(N) loops (kick, drift) go parallel from 65536 bodies: below, one thread takes under ~70 us
// (measured 68 us at 65536 in fp32 and fp64, SoA and AoS), so two threads could save at most
// ~35 us, and a stall costs milliseconds.
constexpr int kParallelBodiesLinear = 65536;
// O(N^2) loops (forces, potential) go parallel from 512 bodies, where one thread takes ~0.8 ms
// and a second one halves it (0.42 ms measured with 2 threads at a quiet moment); below, the
// few hundred us two threads could save are not worth a stall (Kepler binaries, small tests).
constexpr int kParallelBodiesPairwise = 512;
// Flops per pair of the potential sum (pair_potential in double): 3 differences, 3 FMAs (6), a
// square root and a division, the product with the mass and the sum: 13.
constexpr double kPotentialFlopsPerPair = 13.0;

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
#pragma omp parallel for schedule(static) if (n >= kParallelBodiesPairwise)
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
#pragma omp parallel for schedule(static) if (v.n >= kParallelBodiesLinear)
    for (int i = 0; i < v.n; ++i) v.set_vel(i, tiersim::kick(v.vel(i), v.acc(i), h));
    const double bytes = v.n * 9.0 * sizeof(T);  // read v and a, write v
    record("nbody_kick", t0, bytes, bytes, 6.0 * v.n, v.n, "bodies");
  }

  void drift(double dt) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const T h = T(dt);
#pragma omp parallel for schedule(static) if (v.n >= kParallelBodiesLinear)
    for (int i = 0; i < v.n; ++i) v.set_pos(i, tiersim::drift(v.pos(i), v.vel(i), h));
    const double bytes = v.n * 9.0 * sizeof(T);  // read x and v, write x
    record("nbody_drift", t0, bytes, bytes, 6.0 * v.n, v.n, "bodies");
  }

  // Recorded like every other kernel (nbody_potential: the O(N^2) potential sum with the
  // O(N) kinetic energy and momenta), so its cost shows in telemetry at the diagnostics cadence.
  NbodyDiagnostics diagnostics() override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const int n = v.n;
    const double eps2 = params_.softening * params_.softening;
    NbodyDiagnostics d;
    double kin = 0, pot = 0, mass = 0, px = 0, py = 0, pz = 0, lx = 0, ly = 0, lz = 0;
    // Double precision throughout: the diagnostics judge the integration, they must not add error.
#pragma omp parallel for schedule(static) reduction(+ : kin, pot, mass, px, py, pz, lx, ly, lz) \
    if (n >= kParallelBodiesPairwise)
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
    // Each body's position, velocity and mass read once; a few sums written. Flops per body
    // besides the pairs: kinetic energy 7, mass 1, momentum 6, angular momentum 15 (a cross
    // product, 9, then m l summed, 6), its share of the potential 3: 32.
    const double bytes = n * 7.0 * sizeof(T);
    const double pairs = double(n) * (n - 1);
    record("nbody_potential", t0, bytes, bytes, kPotentialFlopsPerPair * pairs + 32.0 * n, pairs, "interactions");
    return d;
  }

  std::vector<KernelRecord> take_records(bool) override { return std::exchange(records_, {}); }

 private:
  using clock = std::chrono::steady_clock;
  void record(const char* kernel, clock::time_point t0, double compulsory, double modelled, double flops,
              double work, const char* unit) {
    KernelRecord r;
    r.kernel = kernel;
    // The step that ran it: diagnostics are read by the run loop only with the next step's
    // records, and must still count for their own step (and run.telemetry_every).
    r.step = telemetry_step();
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
