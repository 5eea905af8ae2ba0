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

// What a force launch computes (the kernels' template flag).
enum class ForcePass {
  Forces,           // the accelerations: every step's kernel
  ForcesPotential,  // the accelerations (bit for bit those of Forces) and the potential shares psi
  Potential,        // psi only, the accelerations left alone (always the shared-memory kernel)
};

// The kernel name a launch records (telemetry, NVTX): nbody_forces_shared, nbody_forces_global,
// nbody_forces_potential_shared, nbody_forces_potential_global, nbody_potential.
const char* force_kernel_name(ForcePass pass, Tiling tiling);

// acc_i <- G * sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps2)^(3/2), for the bodies lo <= i < hi
// (those a rank owns; 0 and n for one rank), on `stream`, with the sum over all j.
// With the potential (ForcePass::ForcesPotential, ::Potential), psi (n doubles) gets each body's
// share of the potential energy: psi_i = -sum_{j in S(i)} m_j / sqrt(|r_j - r_i|^2 + eps2), where
// the sets S(i) hold every pair {i, j} of bodies once (never j = i), so that the potential energy
// is G sum_i m_i psi_i (reduce_nbody_diagnostics). S(i) depends on the launch shape only, which
// choose_force_launch fixes for given n and tuning: both passes with the potential give the same
// psi bit for bit, whatever the tiling. The launch covers the blocks of the whole-n launch that
// hold bodies of [lo, hi), with the same shape and block indices, and writes only those bodies:
// their accelerations and psi are the ones a launch over all n gives, bit for bit. rec gets
// kernel name, cost model and launch shape (rec.ms is left to the caller).
template <class View>
void launch_nbody_forces(const View& bodies, ForcePass pass, Tiling tiling, double eps2, double G,
                         const NbodyTuning& tuning, double* psi, cudaStream_t stream, KernelRecord& rec, int lo,
                         int hi);

}  // namespace tiersim::cuda
