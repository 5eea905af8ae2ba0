// Host-callable drivers of the all-pairs gravity kernels (HOOMD-blue's gpu_* driver split):
// the engine calls these with a view over device memory and a stream; the kernels and their
// launch configuration live in nbody_forces.cu. Each driver fills the KernelRecord's cost
// model (bytes, flops, work); the caller adds the measured time.
#pragma once

#include <cuda_runtime.h>

#include "kernels/nbody_engine.hpp"
#include "layouts/particles.hpp"
#include "base/strategy.hpp"
#include "base/kernel_record.hpp"

namespace tiersim::cuda {

// Launch shape of a force kernel: block threads, bodies per thread (i-bodies held in
// registers), blocks.
struct ForceLaunch {
  int block = 0;
  int bodies_per_thread = 0;
  int grid = 0;
};

// Bodies per thread the kernels are compiled for.
inline constexpr int kForceBodiesPerThread[] = {1, 2, 4, 8};
// Largest block the kernels are compiled for (__launch_bounds__); fp64 holds twice the registers.
inline constexpr int max_force_block(Precision p) { return p == Precision::Fp32 ? 512 : 256; }

// The configuration a force launch will use: tuning values that are set are validated (Error
// with the allowed values); zeros are chosen for the device and n.
ForceLaunch choose_force_launch(Tiling tiling, Precision precision, int n, const NbodyTuning& tuning);

// acc_i <- G * sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps2)^(3/2), for all i, on `stream`.
// rec gets kernel name, cost model and launch shape (rec.ms is left to the caller).
template <class View>
void launch_nbody_forces(const View& bodies, Tiling tiling, double eps2, double G, const NbodyTuning& tuning,
                         cudaStream_t stream, KernelRecord& rec);

// phi_i <- sum_{j != i} -m_j / sqrt(|r_j - r_i|^2 + eps2), accumulated in double (diagnostics).
template <class View>
void launch_nbody_potential(const View& bodies, double eps2, double* phi, cudaStream_t stream);

}  // namespace tiersim::cuda
