// The N-body backend interface: what the time loop (sim/) may ask of a backend. Plain C++:
// the CUDA implementation lives behind make_nbody_cuda() in kernels/cuda, so sim/ never sees
// a kernel (HOOMD-blue's driver split).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layouts/particles.hpp"
#include "base/vec.hpp"
#include "base/strategy.hpp"
#include "base/kernel_record.hpp"

namespace tiersim {

struct NbodyParams {
  double G = 1.0;
  double softening = 0.01;  // Plummer softening length epsilon; eps^2 enters the force
};

struct NbodyDiagnostics {
  double kinetic = 0, potential = 0;
  Vec3<double> momentum{0, 0, 0}, angular_momentum{0, 0, 0};
  double mass = 0;
  // The first owned body (its index among all n) whose velocity, position or acceleration holds
  // a non-finite value, found in the same reduction; -1: none.
  std::int64_t first_non_finite_velocity = -1, first_non_finite_position = -1, first_non_finite_acceleration = -1;
};

// The bodies split among the ranks of a run (base/comm.hpp): rank r owns bodies first[r] ..
// first[r + 1] - 1, and its engine computes the forces on those, kicks and drifts those only;
// every rank's engine holds the positions and masses of all n (the force sources), which
// exchange_positions() brings up to date after each drift. One rank owns all.
struct BodyPartition {
  std::vector<int> first;  // ranks + 1 bounds: 0, ..., n (empty: one rank owning every body)
  int rank = 0;            // whose engine this is

  int ranks() const { return first.empty() ? 1 : int(first.size()) - 1; }
  int lo() const { return first.empty() ? 0 : first[std::size_t(rank)]; }
  int hi(int n) const { return first.empty() ? n : first[std::size_t(rank) + 1]; }

  // About n / ranks bodies each, in rank order; the bounds are multiples of kBodySliceAlign
  // (layouts/particles.hpp), the last one n. A rank may own none (fewer blocks than ranks).
  static BodyPartition even(int n, int ranks, int rank) {
    BodyPartition p;
    p.rank = rank;
    const std::int64_t a = kBodySliceAlign, blocks = (std::int64_t(n) + a - 1) / a;
    for (std::int64_t r = 0; r <= ranks; ++r)
      p.first.push_back(r == ranks ? n : int(std::min<std::int64_t>(n, a * (r * blocks / ranks))));
    return p;
  }
};

// Tunables of the CUDA force kernels (0 = chosen for the device).
struct NbodyTuning {
  int block = 0;  // threads per block
  int bodies_per_thread = 0;
};

class NbodyEngine {
 public:
  virtual ~NbodyEngine() = default;
  // Under several ranks (BodyPartition) the engine holds all n bodies, and the calls below act on
  // the bodies it owns; the velocities and accelerations of the others are not kept up to date.
  virtual int size() const = 0;
  virtual void upload(const Bodies& b) = 0;  // replaces the whole state (all n bodies)
  virtual Bodies download() = 0;             // copies the state back (only when output needs it)
  // acc <- G * sum_j m_j (r_j - r_i) / (r^2 + eps^2)^(3/2). with_potential (diagnostics steps):
  // the same pass also sums the potential energy -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) for the
  // next diagnostics(); the accelerations are the same bit for bit either way.
  virtual void compute_forces(bool with_potential = false) = 0;
  virtual void kick(double dt) = 0;   // v += a * dt
  virtual void drift(double dt) = 0;  // x += v * dt
  // Collective, after a drift under several ranks: every rank's engine gets the owned positions
  // of the others (the strategy's transport, kernels/transport.hpp: NCCL between the GPUs, or
  // comm::allgather through host memory; a telemetry record "position_exchange_nccl" or "_mpi").
  // Nothing with one rank.
  virtual void exchange_positions() = 0;
  // Energies and momenta of the owned bodies (the potential: of the owned bodies' shares of the
  // pairs), reduced where the data is (a few scalars come back). The potential is
  // the last compute_forces(true)'s when no drift or upload came after it; otherwise it is summed
  // now by a potential-only pass of the same arithmetic, and the accelerations are left alone.
  // with_potential = false (the non-finite check of a step without diagnostics): no such pass,
  // and the potential returned is meaningless.
  virtual NbodyDiagnostics diagnostics(bool with_potential = true) = 0;
  // Kernel records completed since the last call, with their elapsed times (waits for them).
  // Kernel records since the last call, in launch order. wait = false returns only those whose
  // device work has finished (no synchronisation: the host may run steps ahead of the GPU).
  virtual std::vector<KernelRecord> take_records(bool wait = true) = 0;
  virtual std::string strategy_name() const = 0;
};

// `part`: the bodies this engine owns (the default: all of them, one rank).
std::unique_ptr<NbodyEngine> make_nbody_cpu(const Strategy& s, int n, const NbodyParams& p,
                                            const BodyPartition& part = {});
// Throws Error when tiersim was built without CUDA or no GPU is usable.
std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t = {},
                                             const BodyPartition& part = {});

}  // namespace tiersim
