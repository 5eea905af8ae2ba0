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
//
// Under several ranks (BodyPartition) the loops over bodies i run over the owned range only;
// each i's sum over j is the same loop over all n, so the owned bodies' accelerations, kicks
// and drifts are bit for bit those of one rank.
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "base/comm.hpp"
#include "base/compensated_sum.hpp"
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

template <class View>
class CpuNbodyEngine final : public NbodyEngine {
  using T = typename View::scalar;

 public:
  CpuNbodyEngine(const Strategy& s, int n, const NbodyParams& p, const BodyPartition& part)
      : store_(n),
        phi_(std::size_t(n)),
        params_(p),
        part_(part),
        lo_(part.lo()),
        hi_(part.hi(n)),
        strategy_(std::string("cpu/") + name(s.layout) + "/" + name(s.precision)) {}

  int size() const override { return store_.size(); }
  void upload(const Bodies& b) override {
    store_bodies(b, store_.view());
    potential_current_ = false;
  }
  Bodies download() override { return load_bodies(store_.view()); }
  std::string strategy_name() const override { return strategy_; }

  void compute_forces(bool with_potential) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const int n = v.n;
    const T eps2 = T(force_eps2(params_.softening));
    const T G = T(params_.G);
    const int owned = hi_ - lo_;
    const double nn = double(owned) * n;
    // Positions and masses of all n read, the owned accelerations written.
    const double force_bytes = (n * 4.0 + owned * 3.0) * sizeof(T);
    if (with_potential) {
      pairs_with_potential<true>(v, eps2, G);
      // Besides the forces' bytes, phi written; one flop (the sum) per pair term.
      const double bytes = force_bytes + owned * sizeof(double);
      record("nbody_forces_potential", t0, bytes, bytes, kFlopsPerInteraction * nn + double(owned) * (n - 1), nn,
             "interactions");
      return;
    }
    // Blocks of kBlock bodies i; for each j the block's interactions run as SIMD lanes. Each
    // body's sum still runs over j in order, so the result is the same for any thread count.
#pragma omp parallel for schedule(static) if (n >= kParallelBodiesPairwise)
    for (int i0 = lo_; i0 < hi_; i0 += kBlock) {
      const int m = std::min(kBlock, hi_ - i0);
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
    record("nbody_forces", t0, force_bytes, force_bytes, kFlopsPerInteraction * nn, nn, "interactions");
  }

  void kick(double dt) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const T h = T(dt);
    const int owned = hi_ - lo_;
#pragma omp parallel for schedule(static) if (owned >= kParallelBodiesLinear)
    for (int i = lo_; i < hi_; ++i) v.set_vel(i, tiersim::kick(v.vel(i), v.acc(i), h));
    const double bytes = owned * 9.0 * sizeof(T);  // read v and a, write v
    record("nbody_kick", t0, bytes, bytes, 6.0 * owned, owned, "bodies");
  }

  void drift(double dt) override {
    const auto t0 = clock::now();
    const View v = store_.view();
    const T h = T(dt);
    const int owned = hi_ - lo_;
#pragma omp parallel for schedule(static) if (owned >= kParallelBodiesLinear)
    for (int i = lo_; i < hi_; ++i) v.set_pos(i, tiersim::drift(v.pos(i), v.vel(i), h));
    const double bytes = owned * 9.0 * sizeof(T);  // read x and v, write x
    record("nbody_drift", t0, bytes, bytes, 6.0 * owned, owned, "bodies");
    potential_current_ = false;
  }

  // In place in the store: each rank's position ranges (View::position_ranges) land where they
  // lie in every rank's store, one allgather per kind of range.
  void exchange_positions() override {
    const int ranks = part_.ranks();
    if (ranks == 1) return;
    if (ranks != comm::size())
      throw Error("exchange_positions: bodies split for " + std::to_string(ranks) + " ranks, the run has " +
                  std::to_string(comm::size()));
    const auto t0 = clock::now();
    const std::size_t n = std::size_t(store_.size()), me = std::size_t(part_.rank);
    char* base = static_cast<char*>(store_.data());
    std::vector<std::array<ByteRange, View::kPositionRanges>> of(static_cast<std::size_t>(ranks));
    for (std::size_t r = 0; r < of.size(); ++r)
      of[r] = View::position_ranges(n, std::size_t(part_.first[r]), std::size_t(part_.first[r + 1]));
    double mine = 0, all = 0;
    std::vector<std::size_t> offsets(of.size()), counts(of.size());
    for (std::size_t k = 0; k < std::size_t(View::kPositionRanges); ++k) {
      for (std::size_t r = 0; r < of.size(); ++r) {
        offsets[r] = of[r][k].offset;
        counts[r] = of[r][k].bytes;
        all += double(counts[r]);
      }
      mine += double(counts[me]);
      comm::allgather(base + offsets[me], base, offsets, counts);
    }
    record_exchange(t0, mine, all, ranks);
    potential_current_ = false;
  }

  // The potential of the last compute_forces(true) when the positions have not moved since (the
  // model asks for it on diagnostics steps); otherwise a potential-only pass (nbody_potential) of
  // the same arithmetic first. The O(N) sums (nbody_diagnostics) run on one thread in body order,
  // each compensated (Neumaier), so they are the same for any thread count and lose no digits
  // that fp64 runs need (a plain sum of 2^20 terms can be off by up to 2^20 x 1.1e-16 = 1e-10).
  NbodyDiagnostics diagnostics(bool with_potential) override {
    const View v = store_.view();
    const int n = v.n, owned = hi_ - lo_;
    if (with_potential && !potential_current_) {
      const auto t0 = clock::now();
      pairs_with_potential<false>(v, T(force_eps2(params_.softening)), T(params_.G));
      const double pairs = double(owned) * (n - 1);  // each pair twice, once for each body
      const double bytes = n * 4.0 * sizeof(T) + owned * sizeof(double);
      record("nbody_potential", t0, bytes, bytes, kPotentialFlopsPerPair * pairs, pairs, "interactions");
    }
    const auto t0 = clock::now();
    CompensatedSum kin, pot, mass, px, py, pz, lx, ly, lz;
    NbodyDiagnostics d;
    auto finite = [](const auto& a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); };
    for (int i = lo_; i < hi_; ++i) {
      const auto p = v.pos(i), u = v.vel(i);
      if (d.first_non_finite_velocity < 0 && !finite(u)) d.first_non_finite_velocity = i;
      if (d.first_non_finite_position < 0 && !finite(p)) d.first_non_finite_position = i;
      if (d.first_non_finite_acceleration < 0 && !finite(v.acc(i))) d.first_non_finite_acceleration = i;
      const Vec3<double> x{p.x, p.y, p.z}, w{u.x, u.y, u.z};
      const double m = v.mass(i);
      kin.add(0.5 * m * dot(w, w));
      pot.add(0.5 * m * phi_[std::size_t(i)]);
      mass.add(m);
      px.add(m * w.x), py.add(m * w.y), pz.add(m * w.z);
      const Vec3<double> l = cross(x, w);
      lx.add(m * l.x), ly.add(m * l.y), lz.add(m * l.z);
    }
    d.kinetic = kin.value();
    d.potential = params_.G * pot.value();
    d.mass = mass.value();
    d.momentum = {px.value(), py.value(), pz.value()};
    d.angular_momentum = {lx.value(), ly.value(), lz.value()};
    // Each body's position, velocity, mass and phi read once. Flops per body: kinetic energy 7,
    // mass 1, momentum 6, angular momentum 15 (a cross product, 9, then m l summed, 6), its share
    // of the potential 3: 32 (the compensation's own operations not counted).
    const double bytes = owned * (7.0 * sizeof(T) + sizeof(double));
    // Without the potential: the same pass, read for the non-finite check only.
    record(with_potential ? "nbody_diagnostics" : "nbody_finite_check", t0, bytes, bytes, 32.0 * owned, owned,
           "bodies");
    records_.back().diagnostics = true;
    return d;
  }

  std::vector<KernelRecord> take_records(bool) override { return std::exchange(records_, {}); }

 private:
  using clock = std::chrono::steady_clock;
  void record(const char* kernel, clock::time_point t0, double compulsory, double modelled, double flops, double work,
              const char* unit) {
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

  // The exchange's record: `mine` bytes of this rank's positions, `all` of every rank's. Its
  // bytes are those sent and received as if each rank sent its part to each other one: mine to
  // ranks - 1 ranks, and the others' parts received.
  void record_exchange(clock::time_point t0, double mine, double all, int ranks) {
    const double bytes = mine * (ranks - 1) + (all - mine);
    record("position_exchange_mpi", t0, bytes, bytes, 0, bytes, "bytes");
    records_.back().communication = true;
  }

  // The pair loop with the potential: phi_i = -sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) into phi_,
  // and with kForces the accelerations too, bit for bit those of compute_forces(false): the same
  // operations (accumulate_pair_potential is accumulate_pair plus the m_j / r it forms anyway) in
  // the same order. Each body's terms are summed in j order, kChunk at a time in T, the chunk sums
  // in double: the rounding of a running fp32 sum grows with its length, and this keeps it that of
  // a kChunk-term sum whatever n. Each body's sum is one thread's, in a fixed order: the result
  // does not depend on the thread count. The self term j = i is left out, as the potential
  // energy has it (with softening it would be m_i / eps, not 0).
  template <bool kForces>
  void pairs_with_potential(const View v, T eps2, T G) {
    const int n = v.n;
    constexpr int kChunk = 256;  // a multiple of kBlock: a block's own bodies lie in one chunk
    double* phi = phi_.data();
#pragma omp parallel for schedule(static) if (n >= kParallelBodiesPairwise)
    for (int i0 = lo_; i0 < hi_; i0 += kBlock) {
      const int m = std::min(kBlock, hi_ - i0);
      T px[kBlock], py[kBlock], pz[kBlock], ax[kBlock] = {}, ay[kBlock] = {}, az[kBlock] = {};
      double sum[kBlock] = {};
      for (int k = 0; k < kBlock; ++k) {
        const Vec3<T> p = v.pos(i0 + std::min(k, m - 1));
        px[k] = p.x, py[k] = p.y, pz[k] = p.z;
      }
      for (int c0 = 0; c0 < n; c0 += kChunk) {
        const int c1 = std::min(n, c0 + kChunk);
        const bool own = i0 >= c0 && i0 < c1;  // the chunk holding bodies i0 .. i0 + kBlock - 1
        T part[kBlock] = {};
        for (int j = c0; j < c1; ++j) {
          const Vec4<T> q = v.pos_mass(j);
#pragma omp simd
          for (int k = 0; k < kBlock; ++k) {
            Vec3<T> a{ax[k], ay[k], az[k]};
            const T m_inv = accumulate_pair_potential(Vec3<T>{px[k], py[k], pz[k]}, q, eps2, a);
            if constexpr (kForces) ax[k] = a.x, ay[k] = a.y, az[k] = a.z;
            part[k] += own && j == i0 + k ? T(0) : m_inv;
          }
        }
        for (int k = 0; k < kBlock; ++k) sum[k] += double(part[k]);
      }
      for (int k = 0; k < m; ++k) {
        if constexpr (kForces) v.set_acc(i0 + k, G * Vec3<T>{ax[k], ay[k], az[k]});
        phi[i0 + k] = -sum[k];
      }
    }
    potential_current_ = true;
  }

  // The force loops' blocks of bodies i (SIMD lanes). Owned ranges start at multiples of
  // kBodySliceAlign, so a rank's blocks are those one rank makes.
  static constexpr int kBlock = 16;
  static_assert(kBodySliceAlign % kBlock == 0);

  HostParticleStore<View> store_;
  std::vector<double> phi_;         // potential per body (G left out), of the last pass that summed it
  bool potential_current_ = false;  // phi_ is that of the bodies as they are now
  NbodyParams params_;
  BodyPartition part_;
  int lo_, hi_;  // the owned bodies
  std::string strategy_;
  std::vector<KernelRecord> records_;
};

}  // namespace

std::unique_ptr<NbodyEngine> make_nbody_cpu(const Strategy& s, int n, const NbodyParams& p, const BodyPartition& part) {
  return with_layout_and_scalar(s.layout, s.precision, [&](auto layout, auto scalar) -> std::unique_ptr<NbodyEngine> {
    using View = ParticleView<decltype(layout)::value, typename decltype(scalar)::type>;
    return std::make_unique<CpuNbodyEngine<View>>(s, n, p, part);
  });
}

}  // namespace tiersim
