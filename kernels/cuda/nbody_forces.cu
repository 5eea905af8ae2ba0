// All-pairs gravity on the GPU, two ways of moving the j-bodies:
//   --tiling none:   every thread reads every body j from global memory (all threads of a warp
//                    read the same j: one broadcast request per warp, served by L1/L2);
//   --tiling shared: the block stages B bodies at a time in shared memory as Vec4 {x,y,z,m}
//                    (one 128-bit LDS per j for fp32, whatever the global layout), so global
//                    traffic falls by the block size and the layout only matters for the staging.
// Both hold K i-bodies per thread in registers (one shared/global load feeds K interactions) and
// call the pair force from kernels/physics/gravity.hpp, the same function the CPU backend uses.
//
// On diagnostics steps the same kernels also sum the potential energy (a template flag,
// ForcePass; the kernel of every other step is compiled as before): the pair's m_j / r is the
// product the force forms first, so each term costs one add, and each pair is added once, to one
// of its two bodies, which halves those adds (see "The potential beside the forces" below).
//
// Numerics. This file is compiled with -ftz=true (CMakeLists.txt): rsqrtf is then a single
// MUFU.RSQ with no denormal fix-up around it; r^2 >= eps^2 is never denormal for sane units.
// fp64 takes its reciprocal square root from an fp32 MUFU.RSQ seed refined by one third-order
// Newton step in double (rsqrt_hd in gravity.hpp), relative error ~1e-16 against CUDA's
// rsqrt(double), which is a long software sequence on every GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/nbody_forces.cuh"
#include "kernels/device_info.hpp"
#include "kernels/physics/gravity.hpp"

namespace tiersim::cuda {

namespace {

// The pair force of gravity.hpp, the same function the CPU backend calls (its rsqrt_hd is one
// MUFU.RSQ in fp32 and a seeded Newton step in fp64).
template <class T>
__device__ __forceinline__ void interact(const Vec3<T>& ri, const Vec4<T>& rj_m, T eps2, Vec3<T>& acc) {
  accumulate_pair(ri, rj_m, eps2, acc);
}

template <class T>
constexpr int kMaxBlock = sizeof(T) == 4 ? max_force_block(Precision::Fp32) : max_force_block(Precision::Fp64);

template <int K, class View, class T = typename View::scalar>
__device__ __forceinline__ void load_i_bodies(const View& v, int first, Vec3<T> (&ri)[K], Vec3<T> (&ai)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = first + k * int(blockDim.x);
    ri[k] = i < v.n ? v.pos(i) : Vec3<T>{T(0), T(0), T(0)};
    ai[k] = {T(0), T(0), T(0)};
  }
}

// Only the bodies lo <= i < hi are written (the rank's own; a block may hold others' too).
template <int K, class View, class T = typename View::scalar>
__device__ __forceinline__ void store_acc(const View& v, int first, T G, const Vec3<T> (&ai)[K], int lo, int hi) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = first + k * int(blockDim.x);
    if (i >= lo && i < hi) v.set_acc(i, {G * ai[k].x, G * ai[k].y, G * ai[k].z});
  }
}

// ---- The potential beside the forces (ForcePass::ForcesPotential, ::Potential) ----------------
// The potential energy W = -G sum_{i<j} m_i m_j / sqrt(r_ij^2 + eps^2) needs each pair once, so a
// pair's term m / r goes to one of its two bodies only. Block a owns the group of B*K bodies
// a*B*K ... (a+1)*B*K - 1 (B threads, K bodies each; g = ceil(n / (B*K)) groups) and adds, for its
// bodies i, the terms of the j-bodies of group b when (tile_share):
//   b == a:                        j > i: the pairs inside the group once each, and never the self
//                                  term j = i (with softening it is m_i / eps, not 0; the potential
//                                  energy leaves it out),
//   d = (b - a) mod g, 0 < 2d < g: every j,
//   2d == g:                       every j when a < b,
//   otherwise:                     none: block b adds these pairs to its bodies.
// Of two blocks a != b exactly one adds the pairs between their groups, and each block adds the
// terms of about half of the tiles: half an add per interaction on average, spread evenly over the
// blocks. A tile is B consecutive j-bodies (B divides B*K, so a tile lies in one group). Each
// body's terms of one tile are summed in the kernel's precision, the tile sums in double, and
// psi_i = -(that sum). The tiles and their order are the same in the shared and the global kernel.
enum class TileShare { None, All, Above };

__device__ __forceinline__ TileShare tile_share(int a, int b, int groups) {
  if (b == a) return TileShare::Above;
  const int d = b > a ? b - a : b - a + groups;
  return 2 * d < groups || (2 * d == groups && a < b) ? TileShare::All : TileShare::None;
}

// One tile of `count` j-bodies (jbody(jj) for jj < count, body index j0 + jj) against the thread's
// K bodies (first + k*B), in a pass with the potential: accelerations as in the Forces pass
// (accumulate_pair_potential does accumulate_pair's operations), and this tile's share of the
// potential added to pot[k].
template <ForcePass P, int K, class T, class JBody>
__device__ __forceinline__ void tile_with_potential(const JBody& jbody, int j0, int count, int B, TileShare share,
                                                    int first, const Vec3<T> (&ri)[K], T eps2, Vec3<T> (&ai)[K],
                                                    double (&pot)[K]) {
  if (share == TileShare::None) {
    if constexpr (P == ForcePass::ForcesPotential) {  // forces only: the Forces pass's loops
      if (count == B) {
#pragma unroll(32 / K)
        for (int jj = 0; jj < B; ++jj) {
          const Vec4<T> b = jbody(jj);
#pragma unroll
          for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
        }
      } else {
        for (int jj = 0; jj < count; ++jj) {
          const Vec4<T> b = jbody(jj);
#pragma unroll
          for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
        }
      }
    }
    return;
  }
  T part[K];
#pragma unroll
  for (int k = 0; k < K; ++k) part[k] = T(0);
  if (share == TileShare::All && count == B) {
#pragma unroll(32 / K)
    for (int jj = 0; jj < B; ++jj) {
      const Vec4<T> b = jbody(jj);
#pragma unroll
      for (int k = 0; k < K; ++k) part[k] += accumulate_pair_potential(ri[k], b, eps2, ai[k]);
    }
  } else {  // the group's own tiles (j > i only) and a last, partial tile
    for (int jj = 0; jj < count; ++jj) {
      const Vec4<T> b = jbody(jj);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const T m_inv = accumulate_pair_potential(ri[k], b, eps2, ai[k]);
        if (share == TileShare::All || j0 + jj > first + k * B) part[k] += m_inv;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) pot[k] += double(part[k]);
}

template <int K>
__device__ __forceinline__ void store_psi(int lo, int hi, int first, const double (&pot)[K], double* __restrict__ psi) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = first + k * int(blockDim.x);
    if (i >= lo && i < hi) psi[i] = -pot[k];
  }
}

// Shared-memory tiling. Thread t of block b owns bodies b*B*K + k*B + t (k < K): coalesced
// loads and stores of the i-bodies in every layout. ForcePass::Forces is the kernel of every
// step; the other passes run on diagnostics steps (psi is used by them only). Block b is block
// block0 + blockIdx.x of the launch over all n (block0 > 0: a rank's bodies lo .. hi - 1).
template <ForcePass P, int K, class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kMaxBlock<T>)
    nbody_forces_shared_kernel(const View v, const T eps2, const T G, double* __restrict__ psi, const int block0,
                               const int lo, const int hi) {
  extern __shared__ __align__(32) unsigned char smem_raw[];
  Vec4<T>* tile = reinterpret_cast<Vec4<T>*>(smem_raw);
  const int B = blockDim.x;
  const int n = v.n;
  const int block = block0 + int(blockIdx.x);
  const int first = block * B * K + threadIdx.x;
  Vec3<T> ri[K], ai[K];
  load_i_bodies<K>(v, first, ri, ai);
  if constexpr (P == ForcePass::Forces) {
    for (int t0 = 0; t0 < n; t0 += B) {
      const int j = t0 + threadIdx.x;
      tile[threadIdx.x] = j < n ? v.pos_mass(j) : Vec4<T>{T(0), T(0), T(0), T(0)};
      __syncthreads();
      const int count = min(B, n - t0);
      if (count == B) {
#pragma unroll(32 / K)
        for (int jj = 0; jj < B; ++jj) {
          const Vec4<T> b = tile[jj];  // same address across the warp: broadcast
#pragma unroll
          for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
        }
      } else {
        for (int jj = 0; jj < count; ++jj) {
          const Vec4<T> b = tile[jj];
#pragma unroll
          for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
        }
      }
      __syncthreads();
    }
  } else {
    double pot[K];
#pragma unroll
    for (int k = 0; k < K; ++k) pot[k] = 0.0;
    const int group = B * K, groups = (n + group - 1) / group;
    for (int t0 = 0; t0 < n; t0 += B) {
      const TileShare share = tile_share(block, t0 / group, groups);
      // The same for every thread of the block: no thread waits at a barrier the others skip.
      if (P == ForcePass::Potential && share == TileShare::None) continue;
      const int j = t0 + threadIdx.x;
      tile[threadIdx.x] = j < n ? v.pos_mass(j) : Vec4<T>{T(0), T(0), T(0), T(0)};
      __syncthreads();
      tile_with_potential<P, K>([&](int jj) { return tile[jj]; }, t0, min(B, n - t0), B, share, first, ri, eps2, ai,
                                pot);
      __syncthreads();
    }
    store_psi<K>(lo, hi, first, pot, psi);
  }
  if constexpr (P != ForcePass::Potential) store_acc<K>(v, first, G, ai, lo, hi);
}

// No tiling: j-bodies straight from global memory through L1/L2.
template <ForcePass P, int K, class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kMaxBlock<T>)
    nbody_forces_global_kernel(const View v, const T eps2, const T G, double* __restrict__ psi, const int block0,
                               const int lo, const int hi) {
  const int n = v.n;
  const int block = block0 + int(blockIdx.x);
  const int first = block * int(blockDim.x) * K + threadIdx.x;
  Vec3<T> ri[K], ai[K];
  load_i_bodies<K>(v, first, ri, ai);
  if constexpr (P == ForcePass::Forces) {
#pragma unroll(32 / K)
    for (int j = 0; j < n; ++j) {
      const Vec4<T> b = v.pos_mass(j);
#pragma unroll
      for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
    }
  } else {
    // In tiles of B j-bodies, as the shared kernel (same psi bit for bit).
    const int B = blockDim.x;
    double pot[K];
#pragma unroll
    for (int k = 0; k < K; ++k) pot[k] = 0.0;
    const int group = B * K, groups = (n + group - 1) / group;
    for (int t0 = 0; t0 < n; t0 += B) {
      const TileShare share = tile_share(block, t0 / group, groups);
      if (P == ForcePass::Potential && share == TileShare::None) continue;
      tile_with_potential<P, K>([&](int jj) { return v.pos_mass(t0 + jj); }, t0, min(B, n - t0), B, share, first, ri,
                                eps2, ai, pot);
    }
    store_psi<K>(lo, hi, first, pot, psi);
  }
  if constexpr (P != ForcePass::Potential) store_acc<K>(v, first, G, ai, lo, hi);
}

// The blocks of the launch over all n that hold bodies lo .. hi - 1: the first one and how many.
struct BlockSpan {
  int first = 0, count = 0;
};
BlockSpan block_span(const ForceLaunch& fl, int lo, int hi) {
  if (hi <= lo) return {};
  const std::int64_t group = std::int64_t(fl.block) * fl.bodies_per_thread;
  const int b0 = int(lo / group), b1 = int((hi + group - 1) / group);
  return {b0, b1 - b0};
}

template <ForcePass P, int K, class View>
void launch_k(bool shared, const View& v, const ForceLaunch& fl, typename View::scalar eps2, typename View::scalar G,
              double* psi, int lo, int hi, cudaStream_t stream) {
  using T = typename View::scalar;
  const BlockSpan span = block_span(fl, lo, hi);
  const std::string shape = "n=" + std::to_string(v.n) + " grid=" + std::to_string(span.count) + " from block " +
                            std::to_string(span.first) + " block=" + std::to_string(fl.block) +
                            " K=" + std::to_string(K);
  if (shared || P == ForcePass::Potential) {  // the potential-only pass has no global-memory variant
    const std::size_t smem = std::size_t(fl.block) * sizeof(Vec4<T>);
    nbody_forces_shared_kernel<P, K, View><<<span.count, fl.block, smem, stream>>>(v, eps2, G, psi, span.first, lo, hi);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_forces_shared_kernel", shape);
  } else if constexpr (P != ForcePass::Potential) {
    nbody_forces_global_kernel<P, K, View><<<span.count, fl.block, 0, stream>>>(v, eps2, G, psi, span.first, lo, hi);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_forces_global_kernel", shape);
  }
}

template <ForcePass P, class View>
void launch_pass(bool shared, const View& v, const ForceLaunch& fl, typename View::scalar eps2, typename View::scalar G,
                 double* psi, int lo, int hi, cudaStream_t stream) {
  switch (fl.bodies_per_thread) {
    case 1:
      launch_k<P, 1>(shared, v, fl, eps2, G, psi, lo, hi, stream);
      break;
    case 2:
      launch_k<P, 2>(shared, v, fl, eps2, G, psi, lo, hi, stream);
      break;
    case 4:
      launch_k<P, 4>(shared, v, fl, eps2, G, psi, lo, hi, stream);
      break;
    default:
      launch_k<P, 8>(shared, v, fl, eps2, G, psi, lo, hi, stream);
      break;
  }
}

}  // namespace

const char* force_kernel_name(ForcePass pass, Tiling tiling) {
  const bool shared = tiling == Tiling::Shared;
  switch (pass) {
    case ForcePass::Forces:
      return shared ? "nbody_forces_shared" : "nbody_forces_global";
    case ForcePass::ForcesPotential:
      return shared ? "nbody_forces_potential_shared" : "nbody_forces_potential_global";
    case ForcePass::Potential:
      break;
  }
  return "nbody_potential";
}

ForceLaunch choose_force_launch(Tiling tiling, Precision precision, int n, const NbodyTuning& tuning) {
  const int max_block = max_force_block(precision);
  if (tuning.block != 0 && (tuning.block < 32 || tuning.block > max_block || tuning.block % 32 != 0))
    throw Error("nbody block size " + std::to_string(tuning.block) + ": must be a multiple of 32 from 32 to " +
                std::to_string(max_block) + " for " + name(precision));
  if (tuning.bodies_per_thread != 0 && std::find(std::begin(kForceBodiesPerThread), std::end(kForceBodiesPerThread),
                                                 tuning.bodies_per_thread) == std::end(kForceBodiesPerThread))
    throw Error("nbody bodies per thread " + std::to_string(tuning.bodies_per_thread) + ": must be 1, 2, 4 or 8");
  const DeviceInfo d = query_device();
  const int sms = d.sm_count > 0 ? d.sm_count : 132;
  ForceLaunch fl;
  // Defaults from the block x bodies-per-thread sweep on an H200 (docs/performance.md): 2 bodies
  // per thread (one LDS.128 feeds 2 interactions; 4 and 8 lose to register pressure), 512-thread
  // blocks in fp32 and 256 in fp64; shrunk for small n so that every SM still gets ~16 warps.
  int k = tuning.bodies_per_thread;
  if (k == 0) {
    k = 2;
    while (k > 1 && (std::int64_t(n) + k - 1) / k < std::int64_t(sms) * 512) k /= 2;
  }
  int b = tuning.block;
  if (b == 0) {
    b = precision == Precision::Fp32 ? 512 : 256;
    while (b > 64 && (std::int64_t(n) + std::int64_t(b) * k - 1) / (std::int64_t(b) * k) < 2 * sms) b /= 2;
  }
  (void)tiling;
  fl.block = b;
  fl.bodies_per_thread = k;
  fl.grid = int((std::int64_t(n) + std::int64_t(b) * k - 1) / (std::int64_t(b) * k));
  if (fl.grid < 1) fl.grid = 1;
  return fl;
}

template <class View>
void launch_nbody_forces(const View& v, ForcePass pass, Tiling tiling, double eps2, double G, const NbodyTuning& tuning,
                         double* psi, cudaStream_t stream, KernelRecord& rec, int lo, int hi) {
  using T = typename View::scalar;
  const Precision prec = sizeof(T) == 4 ? Precision::Fp32 : Precision::Fp64;
  // The shape of the launch over all n, whatever the range: it fixes the sets S(i) of psi.
  const ForceLaunch fl = choose_force_launch(tiling, prec, v.n, tuning);
  const bool shared = pass == ForcePass::Potential || tiling == Tiling::Shared;
  const T e2 = T(eps2), g = T(G);
  if (v.n > 0 && hi > lo) {
    switch (pass) {
      case ForcePass::Forces:
        launch_pass<ForcePass::Forces>(shared, v, fl, e2, g, psi, lo, hi, stream);
        break;
      case ForcePass::ForcesPotential:
        launch_pass<ForcePass::ForcesPotential>(shared, v, fl, e2, g, psi, lo, hi, stream);
        break;
      case ForcePass::Potential:
        launch_pass<ForcePass::Potential>(true, v, fl, e2, g, psi, lo, hi, stream);
        break;
    }
  }
  // Cost model. Compulsory: positions and masses read once, accelerations written once (and psi,
  // with the potential). Modelled: the j-stream is read once per block (shared) or once per warp
  // (none: one broadcast request per warp per body, served by L1/L2), at the sector cost of the
  // layout; plus the i-bodies' positions read and accelerations written once. The potential adds
  // one flop per pair (the sum); the potential-only pass reads the j-stream on about half of the
  // tiles (tile_share) and counts kPotentialFlopsPerPair per pair. Over a rank's ni bodies: the
  // j-stream of all n, the ni bodies' reads and writes, and their share of the pairs.
  const double n = v.n, ni = hi > lo ? hi - lo : 0;
  const double pairs = ni * (n - 1) / 2;
  const double jb = View::moved_bytes(field_mask(kX, 4));
  const int warps_per_block = (fl.block + 31) / 32;
  const double grid = v.n > 0 ? block_span(fl, lo, hi).count : fl.grid;
  const double streams = shared ? grid : grid * warps_per_block;
  const double pos_read = ni * View::moved_bytes(field_mask(kX, 3)),
               acc_written = ni * View::moved_bytes(field_mask(kAX, 3));
  const double psi_written = ni * sizeof(double);
  rec.kernel = force_kernel_name(pass, shared ? Tiling::Shared : Tiling::None);
  rec.work_unit = "interactions";
  switch (pass) {
    case ForcePass::Forces:
    case ForcePass::ForcesPotential: {
      const bool pot = pass == ForcePass::ForcesPotential;
      rec.bytes_compulsory = n * 4.0 * sizeof(T) + ni * 3.0 * sizeof(T) + (pot ? psi_written : 0.0);
      rec.bytes_modelled = streams * n * jb + pos_read + acc_written + (pot ? psi_written : 0.0);
      rec.flops = kFlopsPerInteraction * ni * n + (pot ? pairs : 0.0);
      rec.work = ni * n;
      break;
    }
    case ForcePass::Potential:
      rec.bytes_compulsory = n * 4.0 * sizeof(T) + psi_written;
      rec.bytes_modelled = 0.5 * streams * n * jb + pos_read + psi_written;
      rec.flops = kPotentialFlopsPerPair * pairs;
      rec.work = pairs;
      break;
  }
}

#define TIERSIM_INSTANTIATE_FORCES(V)                                                                            \
  template void launch_nbody_forces<V>(const V&, ForcePass, Tiling, double, double, const NbodyTuning&, double*, \
                                       cudaStream_t, KernelRecord&, int, int);
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_FORCES, float)
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_FORCES, double)
#undef TIERSIM_INSTANTIATE_FORCES

}  // namespace tiersim::cuda
