// Host-callable drivers of the leapfrog steps and the diagnostics reduction, for every layout.
// kick and drift are memory-bound streams: their records carry compulsory bytes (the fields
// read and written, once) and the bytes the layout makes the memory system move.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/nbody_engine.hpp"
#include "layouts/particles.hpp"
#include "base/kernel_record.hpp"

namespace tiersim::cuda {

// Each acts on the bodies lo <= i < hi (those a rank owns; 0 and n for one rank).

// v_i <- v_i + a_i * dt
template <class View>
void launch_nbody_kick(const View& bodies, double dt, cudaStream_t stream, KernelRecord& rec, int lo, int hi);
// x_i <- x_i + v_i * dt
template <class View>
void launch_nbody_drift(const View& bodies, double dt, cudaStream_t stream, KernelRecord& rec, int lo, int hi);

// Device scratch needed by the diagnostics reduction over `count` bodies (CUB temporary storage +
// result).
template <class View>
std::size_t nbody_diagnostics_scratch_bytes(int count);

// Enqueues on `stream` the sums of kinetic energy, potential energy (sum_i m_i psi_i, psi from a
// force pass with the potential: launch_nbody_forces), momentum, angular momentum and mass, in
// double on the GPU (CUB), into `scratch` (sized for hi - lo bodies); rec gets the kernel name and
// cost model.
template <class View>
void launch_nbody_diagnostics(const View& bodies, const double* psi, void* scratch, std::size_t scratch_bytes,
                              cudaStream_t stream, KernelRecord& rec, int lo, int hi);

// Copies the 9 sums of the last launch_nbody_diagnostics back (waits for the stream).
NbodyDiagnostics fetch_nbody_diagnostics(const void* scratch, double G, cudaStream_t stream);

}  // namespace tiersim::cuda
