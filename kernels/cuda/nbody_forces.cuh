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

// Average bytes per record of the 32-byte sectors touched when a warp reads `len` bytes at
// `offset` of consecutive records of `record` bytes (the memory system moves whole sectors).
double sector_bytes_per_record(std::size_t record, std::size_t offset, std::size_t len);

// Field numbers in the order every layout stores them: x y z m vx vy vz ax ay az.
enum BodyField : int { kX = 0, kY, kZ, kM, kVX, kVY, kVZ, kAX, kAY, kAZ };

// Cost model: bytes per body that the memory system moves when consecutive threads touch the
// fields [first, first + count) of consecutive bodies in this layout.
//  soa, aosoa: exactly the fields (each field is its own coalesced array or 32-lane segment);
//  float4:     whole 4-wide vectors (x y z m | vx vy vz - | ax ay az -);
//  aos:        the 32-byte sectors of the 10-field records that the fields fall in.
template <class View>
double modelled_bytes_per_body(int first, int count) {
  using T = typename View::scalar;
  if constexpr (View::layout == Layout::AoS) {
    return sector_bytes_per_record(10 * sizeof(T), std::size_t(first) * sizeof(T), std::size_t(count) * sizeof(T));
  } else if constexpr (View::layout == Layout::Float4) {
    int groups = 0;
    for (int g = 0; g < 3; ++g) {
      const int lo = g == 0 ? 0 : (g == 1 ? kVX : kAX), hi = g == 0 ? kVX : (g == 1 ? kAX : kAZ + 1);
      if (first < hi && first + count > lo) ++groups;
    }
    return double(groups) * 4.0 * sizeof(T);
  } else {
    return double(count) * sizeof(T);
  }
}

}  // namespace tiersim::cuda
