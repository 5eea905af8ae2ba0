// All-pairs gravity on the GPU, two ways of moving the j-bodies:
//   --tiling none:   every thread reads every body j from global memory (all threads of a warp
//                    read the same j: one broadcast request per warp, served by L1/L2);
//   --tiling shared: the block stages B bodies at a time in shared memory as Vec4 {x,y,z,m}
//                    (one 128-bit LDS per j for fp32, whatever the global layout), so global
//                    traffic falls by the block size and the layout only matters for the staging.
// Both hold K i-bodies per thread in registers (one shared/global load feeds K interactions) and
// call the pair force from kernels/physics/gravity.hpp, the same function the CPU backend uses.
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

template <int K, class View, class T = typename View::scalar>
__device__ __forceinline__ void store_acc(const View& v, int first, T G, const Vec3<T> (&ai)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int i = first + k * int(blockDim.x);
    if (i < v.n) v.set_acc(i, {G * ai[k].x, G * ai[k].y, G * ai[k].z});
  }
}

// Shared-memory tiling. Thread t of block b owns bodies b*B*K + k*B + t (k < K): coalesced
// loads and stores of the i-bodies in every layout.
template <int K, class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kMaxBlock<T>) nbody_forces_shared_kernel(const View v, const T eps2, const T G) {
  extern __shared__ __align__(32) unsigned char smem_raw[];
  Vec4<T>* tile = reinterpret_cast<Vec4<T>*>(smem_raw);
  const int B = blockDim.x;
  const int n = v.n;
  const int first = blockIdx.x * B * K + threadIdx.x;
  Vec3<T> ri[K], ai[K];
  load_i_bodies<K>(v, first, ri, ai);
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
  store_acc<K>(v, first, G, ai);
}

// No tiling: j-bodies straight from global memory through L1/L2.
template <int K, class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kMaxBlock<T>) nbody_forces_global_kernel(const View v, const T eps2, const T G) {
  const int n = v.n;
  const int first = blockIdx.x * int(blockDim.x) * K + threadIdx.x;
  Vec3<T> ri[K], ai[K];
  load_i_bodies<K>(v, first, ri, ai);
#pragma unroll(32 / K)
  for (int j = 0; j < n; ++j) {
    const Vec4<T> b = v.pos_mass(j);
#pragma unroll
    for (int k = 0; k < K; ++k) interact(ri[k], b, eps2, ai[k]);
  }
  store_acc<K>(v, first, G, ai);
}

// Potential per body, accumulated in double with gravity.hpp's pair_potential (diagnostics:
// not hot, so the accurate rsqrt(double)). The self term is excluded.
template <class View, class T = typename View::scalar>
__global__ void __launch_bounds__(256) nbody_potential_kernel(const View v, const double eps2, double* __restrict__ phi) {
  __shared__ Vec4<double> tile[256];
  const int n = v.n;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  Vec3<double> ri{0, 0, 0};
  if (i < n) {
    const Vec3<T> p = v.pos(i);
    ri = {double(p.x), double(p.y), double(p.z)};
  }
  double acc = 0;
  for (int t0 = 0; t0 < n; t0 += blockDim.x) {
    const int j = t0 + threadIdx.x;
    if (j < n) {
      const Vec4<T> q = v.pos_mass(j);
      tile[threadIdx.x] = {double(q.x), double(q.y), double(q.z), double(q.w)};
    }
    __syncthreads();
    const int count = min(int(blockDim.x), n - t0);
    for (int jj = 0; jj < count; ++jj) {
      if (t0 + jj != i) acc += pair_potential(ri, tile[jj], eps2);
    }
    __syncthreads();
  }
  if (i < n) phi[i] = acc;
}

template <int K, class View>
void launch_k(bool shared, const View& v, const ForceLaunch& fl, typename View::scalar eps2,
              typename View::scalar G, cudaStream_t stream) {
  using T = typename View::scalar;
  if (shared) {
    const std::size_t smem = std::size_t(fl.block) * sizeof(Vec4<T>);
    nbody_forces_shared_kernel<K, View><<<fl.grid, fl.block, smem, stream>>>(v, eps2, G);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_forces_shared_kernel",
                              "n=" + std::to_string(v.n) + " grid=" + std::to_string(fl.grid) + " block=" +
                                  std::to_string(fl.block) + " K=" + std::to_string(K));
  } else {
    nbody_forces_global_kernel<K, View><<<fl.grid, fl.block, 0, stream>>>(v, eps2, G);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_forces_global_kernel",
                              "n=" + std::to_string(v.n) + " grid=" + std::to_string(fl.grid) + " block=" +
                                  std::to_string(fl.block) + " K=" + std::to_string(K));
  }
}

}  // namespace

ForceLaunch choose_force_launch(Tiling tiling, Precision precision, int n, const NbodyTuning& tuning) {
  const int max_block = max_force_block(precision);
  if (tuning.block != 0 && (tuning.block < 32 || tuning.block > max_block || tuning.block % 32 != 0))
    throw Error("nbody block size " + std::to_string(tuning.block) + ": must be a multiple of 32 from 32 to " +
                std::to_string(max_block) + " for " + name(precision));
  if (tuning.bodies_per_thread != 0 &&
      std::find(std::begin(kForceBodiesPerThread), std::end(kForceBodiesPerThread), tuning.bodies_per_thread) ==
          std::end(kForceBodiesPerThread))
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
void launch_nbody_forces(const View& v, Tiling tiling, double eps2, double G, const NbodyTuning& tuning,
                         cudaStream_t stream, KernelRecord& rec) {
  using T = typename View::scalar;
  const Precision prec = sizeof(T) == 4 ? Precision::Fp32 : Precision::Fp64;
  const ForceLaunch fl = choose_force_launch(tiling, prec, v.n, tuning);
  const bool shared = tiling == Tiling::Shared;
  const T e2 = T(eps2), g = T(G);
  if (v.n > 0) {
    switch (fl.bodies_per_thread) {
      case 1: launch_k<1>(shared, v, fl, e2, g, stream); break;
      case 2: launch_k<2>(shared, v, fl, e2, g, stream); break;
      case 4: launch_k<4>(shared, v, fl, e2, g, stream); break;
      default: launch_k<8>(shared, v, fl, e2, g, stream); break;
    }
  }
  // Cost model. Compulsory: positions and masses read once, accelerations written once.
  // Modelled: the j-stream is read once per block (shared) or once per warp (none: one
  // broadcast request per warp per body, served by L1/L2), at the sector cost of the layout;
  // plus the i-bodies' positions read and accelerations written once.
  const double n = v.n;
  const double jb = View::moved_bytes(field_mask(kX, 4));
  const int warps_per_block = (fl.block + 31) / 32;
  const double streams = shared ? double(fl.grid) : double(fl.grid) * warps_per_block;
  rec.kernel = shared ? "nbody_forces_shared" : "nbody_forces_global";
  rec.bytes_compulsory = n * 4.0 * sizeof(T) + n * 3.0 * sizeof(T);
  rec.bytes_modelled = streams * n * jb + n * View::moved_bytes(field_mask(kX, 3)) +
                       n * View::moved_bytes(field_mask(kAX, 3));
  rec.flops = kFlopsPerInteraction * n * n;
  rec.work = n * n;
  rec.work_unit = "interactions";
}

template <class View>
void launch_nbody_potential(const View& v, double eps2, double* phi, cudaStream_t stream) {
  if (v.n == 0) return;
  const int block = 256;
  const int grid = (v.n + block - 1) / block;
  nbody_potential_kernel<View><<<grid, block, 0, stream>>>(v, eps2, phi);
  TIERSIM_CUDA_CHECK_LAUNCH("nbody_potential_kernel", "n=" + std::to_string(v.n));
}

#define TIERSIM_INSTANTIATE_FORCES(V)                                                                          \
  template void launch_nbody_forces<V>(const V&, Tiling, double, double, const NbodyTuning&, cudaStream_t,     \
                                       KernelRecord&);                                                         \
  template void launch_nbody_potential<V>(const V&, double, double*, cudaStream_t);
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_FORCES, float)
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_FORCES, double)
#undef TIERSIM_INSTANTIATE_FORCES

}  // namespace tiersim::cuda
