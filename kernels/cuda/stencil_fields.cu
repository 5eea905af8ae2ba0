// The stencil engine's other kernels: the halo fill (the boundary condition), the reductions
// (a field's statistics with its non-finite values, the wave equation's energy) and the point
// source.
#include <algorithm>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_kernels.cuh"

namespace tiersim::cuda {
namespace {

int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

template <class T>
__global__ void halo_fill_kernel(GridView<T> g, int axis, HaloBox b0, HaloBox b1, Boundary bc, T value) {
  const long long n0 = b0.points(), n = n0 + b1.points();
  const int na = axis == 0 ? g.nx : axis == 1 ? g.ny : g.nz;
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n; q += (long long)gridDim.x * blockDim.x) {
    const HaloBox& b = q < n0 ? b0 : b1;
    long long r = q < n0 ? q : q - n0;
    const int w = b.hi[0] - b.lo[0], h = b.hi[1] - b.lo[1];
    const int i = b.lo[0] + int(r % w);
    r /= w;
    const int j = b.lo[1] + int(r % h), k = b.lo[2] + int(r / h);
    if (bc == Boundary::Fixed) {
      g(i, j, k) = value;
    } else {
      // No indexed array here: it would live in local memory.
      const int si = axis == 0 ? periodic_index(i, na) : i, sj = axis == 1 ? periodic_index(j, na) : j;
      const int sk = axis == 2 ? periodic_index(k, na) : k;
      g(i, j, k) = g(si, sj, sk);
    }
  }
}

constexpr int kReduceThreads = 256;

enum class Reduce { Sum, Min, Max };

__device__ __forceinline__ double combine(Reduce op, double a, double b) {
  return op == Reduce::Sum ? a + b : op == Reduce::Min ? fmin(a, b) : fmax(a, b);
}

// One block's partials: each thread's values v[c] combined by Ops[c] over the block (warp
// shuffles, then one thread over the warps), written to partials[blockIdx.x * N + c].
template <Reduce... Ops>
__device__ __forceinline__ void block_reduce(double (&v)[sizeof...(Ops)], double* partials) {
  constexpr int N = sizeof...(Ops);
  constexpr Reduce ops[N] = {Ops...};
  __shared__ double sh[N][kReduceThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int c = 0; c < N; ++c) v[c] = combine(ops[c], v[c], __shfl_down_sync(0xffffffffu, v[c], o));
  if (lane == 0)
    for (int c = 0; c < N; ++c) sh[c][warp] = v[c];
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kReduceThreads / 32; ++w)
      for (int c = 0; c < N; ++c) sh[c][0] = combine(ops[c], sh[c][0], sh[c][w]);
    for (int c = 0; c < N; ++c) partials[blockIdx.x * N + c] = sh[c][0];
  }
}

// Statistics of the interior in one pass (kFieldStatsPartials per block): sum, sum of squares,
// min, max, and the non-finite values' count and smallest linear interior index q (exact in a
// double up to 2^53 points; 1e308: none).
// The reductions walk the interior row by row (a block per row, its threads along x): one
// division per row for (j, k), none per point (64-bit division per point made the statistics
// of a 512^3 field take about 10x its read time).
template <class T>
__global__ void __launch_bounds__(kReduceThreads) field_stats_kernel(GridView<T> g, double* partials) {
  double v[kFieldStatsPartials] = {0, 0, 1e308, -1e308, 0, 1e308};
  const long long rows = (long long)g.ny * g.nz;
  // kStatsLoads values of a row per thread loaded before any is used, so that several reads are
  // in flight (one at a time before; heat 1024^3 fp32 on an H200, 20 diagnostics: 0.276 -> 0.206 s).
  constexpr int kStatsLoads = 4;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const int j = int(row % g.ny), k = int(row / g.ny);
    const T* p = &g(0, j, k);
    for (int i0 = threadIdx.x; i0 < g.nx; i0 += kStatsLoads * blockDim.x) {
      T x[kStatsLoads];
#pragma unroll
      for (int u = 0; u < kStatsLoads; ++u) {
        const int i = i0 + u * int(blockDim.x);
        x[u] = i < g.nx ? p[i] : T(0);
      }
#pragma unroll
      for (int u = 0; u < kStatsLoads; ++u) {
        const int i = i0 + u * int(blockDim.x);
        if (i >= g.nx) break;
        const double d = x[u];
        v[0] += d, v[1] += d * d, v[2] = fmin(v[2], d), v[3] = fmax(v[3], d);
        if (!isfinite(d)) v[4] += 1, v[5] = fmin(v[5], double(row * g.nx + i));
      }
    }
  }
  block_reduce<Reduce::Sum, Reduce::Sum, Reduce::Min, Reduce::Max, Reduce::Sum, Reduce::Min>(v, partials);
}

template <class T, int R>
__global__ void __launch_bounds__(kReduceThreads)
    wave_energy_kernel(GridView<T> u, GridView<T> prev, const StencilCoeffs<T>* __restrict__ co, double c2,
                       double inv_dt, double* partials) {
  double v[1] = {0};
  const long long rows = (long long)u.ny * u.nz;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const int j = int(row % u.ny), k = int(row / u.ny);
    for (int i = threadIdx.x; i < u.nx; i += blockDim.x) {
      const T* p = &prev(i, j, k);
      const double lp = laplacian<R>(*co, p[0], [&](int axis, int d) {
        return p[axis == 0 ? (long long)d : axis == 1 ? d * prev.sy : d * prev.sz];
      });
      const double un = u(i, j, k), vel = (un - double(p[0])) * inv_dt;
      v[0] += 0.5 * vel * vel - 0.5 * c2 * un * lp;
    }
  }
  block_reduce<Reduce::Sum>(v, partials);
}

template <class T>
__global__ void add_point_kernel(GridView<T> g, int i, int j, int k, T value) {
  g(i, j, k) += value;
}

// Blocks of a reduction: one per row of the interior, at most max_blocks (each walks rows).
int reduce_blocks(long long rows, int max_blocks) { return int(std::max(1LL, std::min<long long>(max_blocks, rows))); }

}  // namespace

template <class T>
void launch_halo_fill(const GridView<T>& g, Boundary bc, T value, cudaStream_t s, int z_sides) {
  for (int axis = 0; axis < 3; ++axis) {
    HaloBox b0 = halo_box(axis, 0, g.nx, g.ny, g.nz, g.r), b1 = halo_box(axis, 1, g.nx, g.ny, g.nz, g.r);
    if (axis == 2 && !(z_sides & 1)) b0.hi[2] = b0.lo[2];  // an empty box: no points
    if (axis == 2 && !(z_sides & 2)) b1.hi[2] = b1.lo[2];
    const long long n = b0.points() + b1.points();
    if (n == 0) continue;
    const int blocks = std::max(1, std::min(ceil_div(n, 256), 65535));
    halo_fill_kernel<T><<<blocks, 256, 0, s>>>(g, axis, b0, b1, bc, value);
    TIERSIM_CUDA_CHECK_LAUNCH("halo_fill_kernel",
                              "axis " + std::to_string(axis) + ", " + std::to_string(n) + " points");
  }
}

template <class T>
int launch_field_stats(const GridView<T>& g, double* partials, int max_blocks, cudaStream_t s) {
  const int blocks = reduce_blocks((long long)g.ny * g.nz, max_blocks);
  field_stats_kernel<T><<<blocks, kReduceThreads, 0, s>>>(g, partials);
  TIERSIM_CUDA_CHECK_LAUNCH("field_stats_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
int launch_wave_energy(const GridView<T>& u, const GridView<T>& prev, const StencilCoeffs<T>* co, double c2,
                       double inv_dt, double* partials, int max_blocks, cudaStream_t s) {
  const int blocks = reduce_blocks((long long)u.ny * u.nz, max_blocks);
  switch (u.r) {
    case 1:
      wave_energy_kernel<T, 1><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials);
      break;
    case 2:
      wave_energy_kernel<T, 2><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials);
      break;
    case 3:
      wave_energy_kernel<T, 3><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials);
      break;
    default:
      wave_energy_kernel<T, 4><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials);
      break;
  }
  TIERSIM_CUDA_CHECK_LAUNCH("wave_energy_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
void launch_add_point(const GridView<T>& g, int i, int j, int k, T value, cudaStream_t s) {
  add_point_kernel<T><<<1, 1, 0, s>>>(g, i, j, k, value);
  TIERSIM_CUDA_CHECK_LAUNCH("add_point_kernel", "source point");
}

#define TIERSIM_STENCIL_FIELD_KERNELS(T)                                                                              \
  template void launch_halo_fill<T>(const GridView<T>&, Boundary, T, cudaStream_t, int);                              \
  template int launch_field_stats<T>(const GridView<T>&, double*, int, cudaStream_t);                                 \
  template int launch_wave_energy<T>(const GridView<T>&, const GridView<T>&, const StencilCoeffs<T>*, double, double, \
                                     double*, int, cudaStream_t);                                                     \
  template void launch_add_point<T>(const GridView<T>&, int, int, int, T, cudaStream_t);
TIERSIM_STENCIL_FIELD_KERNELS(float)
TIERSIM_STENCIL_FIELD_KERNELS(double)
#undef TIERSIM_STENCIL_FIELD_KERNELS

}  // namespace tiersim::cuda
