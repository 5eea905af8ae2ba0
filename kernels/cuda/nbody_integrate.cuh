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

// v_i <- v_i + a_i * dt
template <class View>
void launch_nbody_kick(const View& bodies, double dt, cudaStream_t stream, KernelRecord& rec);
// x_i <- x_i + v_i * dt
template <class View>
void launch_nbody_drift(const View& bodies, double dt, cudaStream_t stream, KernelRecord& rec);

// Device scratch needed by reduce_nbody_diagnostics for n bodies (CUB temporary storage + result).
template <class View>
std::size_t nbody_diagnostics_scratch_bytes(int n);

// Sums kinetic energy, potential energy (from phi, see launch_nbody_potential), momentum,
// angular momentum and mass on the GPU (CUB), and copies only the 9 sums back.
template <class View>
NbodyDiagnostics reduce_nbody_diagnostics(const View& bodies, const double* phi, double G, void* scratch,
                                          std::size_t scratch_bytes, cudaStream_t stream);

}  // namespace tiersim::cuda
