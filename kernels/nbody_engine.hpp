// The N-body backend interface: what the time loop (sim/) may ask of a backend. Plain C++:
// the CUDA implementation lives behind make_nbody_cuda() in kernels/cuda, so sim/ never sees
// a kernel (HOOMD-blue's driver split).
#pragma once

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
};

// Tunables of the CUDA force kernels (0 = chosen for the device).
struct NbodyTuning {
  int block = 0;  // threads per block
  int bodies_per_thread = 0;
};

class NbodyEngine {
 public:
  virtual ~NbodyEngine() = default;
  virtual int size() const = 0;
  virtual void upload(const Bodies& b) = 0;  // replaces the whole state
  virtual Bodies download() = 0;             // copies the state back (only when output needs it)
  // acc <- G * sum_j m_j (r_j - r_i) / (r^2 + eps^2)^(3/2). with_potential (diagnostics steps):
  // the same pass also sums the potential energy -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) for the
  // next diagnostics(); the accelerations are the same bit for bit either way.
  virtual void compute_forces(bool with_potential = false) = 0;
  virtual void kick(double dt) = 0;   // v += a * dt
  virtual void drift(double dt) = 0;  // x += v * dt
  // Energies and momenta, reduced where the data is (a few scalars come back). The potential is
  // the last compute_forces(true)'s when no drift or upload came after it; otherwise it is summed
  // now by a potential-only pass of the same arithmetic, and the accelerations are left alone.
  virtual NbodyDiagnostics diagnostics() = 0;
  // Kernel records completed since the last call, with their elapsed times (waits for them).
  // Kernel records since the last call, in launch order. wait = false returns only those whose
  // device work has finished (no synchronisation: the host may run steps ahead of the GPU).
  virtual std::vector<KernelRecord> take_records(bool wait = true) = 0;
  virtual std::string strategy_name() const = 0;
};

std::unique_ptr<NbodyEngine> make_nbody_cpu(const Strategy& s, int n, const NbodyParams& p);
// Throws Error when tiersim was built without CUDA or no GPU is usable.
std::unique_ptr<NbodyEngine> make_nbody_cuda(const Strategy& s, int n, const NbodyParams& p, const NbodyTuning& t = {});

}  // namespace tiersim
