// The stencil engine's other kernels: the halo fill (the boundary condition), the reductions
// (a field's statistics with its non-finite values, the wave equation's energy) and the point
// source.
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_device.cuh"
#include "kernels/cuda/stencil_kernels.cuh"

namespace tiersim::cuda {
namespace {

int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// The halo fill in one launch: every halo point of every grid is written from its periodic
// image in the interior (all three coordinates wrapped), so no face waits for another and edges
// and corners need no ordered passes. The x faces of the interior rows (a few points at each end
// of every row: partly written sectors, most of the fill's time) are left out where the update
// wrote them. Blocks come in two kinds: kHaloBlockPoints of one z halo
// plane (a whole padded plane), or of one interior plane's x and y faces. Each thread loads its
// kHaloPerThread points before storing any (several reads in flight), and the indices are 32-bit
// divisions by the block's plane shape, never per-point 64-bit ones.
constexpr int kHaloThreads = 256, kHaloPerThread = 4, kHaloBlockPoints = kHaloThreads * kHaloPerThread;

template <class T>
struct HaloLaunch {
  HaloFill<T> f;
  Boundary bc;
  int lo_planes, hi_planes;  // z halo planes filled below 0 and past nz - 1 (0 or r each)
  int plane_blocks;          // blocks per z halo plane
  int face_blocks;           // blocks per interior plane
};

template <class T>
__global__ void __launch_bounds__(kHaloThreads) halo_fill_kernel(HaloLaunch<T> a) {
  const GridView<T> g = a.f.grids[blockIdx.y];
  const int r = g.r, wx = g.nx + 2 * r;  // a padded row
  const int zh_blocks = (a.lo_planes + a.hi_planes) * a.plane_blocks;
  int b = int(blockIdx.x), k, p0, count;
  const bool halo_plane = b < zh_blocks;
  if (halo_plane) {
    const int h = b / a.plane_blocks;
    k = h < a.lo_planes ? h - r : g.nz + (h - a.lo_planes);
    p0 = (b - h * a.plane_blocks) * kHaloBlockPoints;
    count = wx * (g.ny + 2 * r);
  } else {
    b -= zh_blocks;
    k = b / a.face_blocks;
    p0 = (b - k * a.face_blocks) * kHaloBlockPoints;
    count = 2 * r * (wx + (a.f.x_faces ? g.ny : 0));  // y faces (full padded rows), then x faces (2r points a row)
  }
  std::ptrdiff_t dst[kHaloPerThread];
  T v[kHaloPerThread];
#pragma unroll
  for (int u = 0; u < kHaloPerThread; ++u) {
    const int p = p0 + u * kHaloThreads + int(threadIdx.x);
    if (p >= count) break;
    int i, j;
    if (halo_plane) {
      j = p / wx;
      i = p - j * wx - r, j -= r;
    } else if (p < 2 * r * wx) {
      const int jj = p / wx;
      i = p - jj * wx - r;
      j = jj < r ? jj - r : g.ny + jj - r;
    } else {
      const int q = p - 2 * r * wx, t = q % (2 * r);
      j = q / (2 * r);
      i = t < r ? t - r : g.nx + t - r;
    }
    dst[u] = g.offset(i, j, k);
    v[u] = a.bc == Boundary::Fixed ? a.f.values[blockIdx.y]
                                   : g(periodic_index(i, g.nx), periodic_index(j, g.ny), periodic_index(k, g.nz));
  }
#pragma unroll
  for (int u = 0; u < kHaloPerThread; ++u)
    if (p0 + u * kHaloThreads + int(threadIdx.x) < count) g.origin[dst[u]] = v[u];
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
// A warp per row: one division per row for (j, k), none per point (64-bit division per point
// made the statistics of a 512^3 field take about 10x its read time). Interior rows start on a
// 128-byte line (layouts/grid.hpp), so a lane reads 16-byte vectors, kStatsLoads of them before
// using any (64 bytes in flight per thread, where a 512-point fp32 row gives each lane 4 of its 128
// vectors); a row's points past its last whole vector are read one by one. A vector's sum and sum
// of squares are formed in T and added to the double sums once, so that the conversions and double
// additions come a vector, not a point, at a time; min and max stay in T.
constexpr int kStatsWarps = kReduceThreads / 32, kStatsLoads = 4;
template <class T>
__global__ void __launch_bounds__(kReduceThreads) field_stats_kernel(GridView<T> g, double* partials) {
  constexpr int VW = V<T>::n;
  double v[kFieldStatsPartials] = {0, 0, 1e308, -1e308, 0, 1e308};
  auto add = [&](double d, long long q) {
    v[0] += d, v[1] += d * d, v[2] = fmin(v[2], d), v[3] = fmax(v[3], d);
    if (!isfinite(d)) v[4] += 1, v[5] = fmin(v[5], double(q));
  };
  T tlo = std::numeric_limits<T>::infinity(), thi = -tlo;  // the vectors' (finite) min and max
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const long long rows = (long long)g.ny * g.nz;
  const int nv = g.nx / VW;  // whole vectors of a row
  for (long long row = (long long)blockIdx.x * kStatsWarps + warp; row < rows;
       row += (long long)gridDim.x * kStatsWarps) {
    const T* p = &g(0, int(row % g.ny), int(row / g.ny));
    const long long q0 = row * g.nx;  // linear interior index of the row's first point
    for (int v0 = lane; v0 < nv; v0 += 32 * kStatsLoads) {
      V<T> x[kStatsLoads];
#pragma unroll
      for (int u = 0; u < kStatsLoads; ++u) {
        const int vi = v0 + 32 * u;
        if (vi < nv) x[u] = ld16(p + vi * VW);
      }
#pragma unroll
      for (int u = 0; u < kStatsLoads; ++u) {
        const int vi = v0 + 32 * u;
        if (vi >= nv) break;
        // A vector's sums in T first, one conversion each into the double sums; a non-finite
        // value (or a sum that overflows) takes the point-by-point path, which counts it.
        T s = x[u].e[0], sq = x[u].e[0] * x[u].e[0], lo = x[u].e[0], hi = x[u].e[0];
#pragma unroll
        for (int e = 1; e < VW; ++e) {
          s += x[u].e[e], sq = fma(x[u].e[e], x[u].e[e], sq);
          lo = min(lo, x[u].e[e]), hi = max(hi, x[u].e[e]);
        }
        if (isfinite(s) && isfinite(sq)) {
          v[0] += double(s), v[1] += double(sq), tlo = min(tlo, lo), thi = max(thi, hi);
        } else {
#pragma unroll
          for (int e = 0; e < VW; ++e) add(x[u].e[e], q0 + vi * VW + e);
        }
      }
    }
    for (int i = nv * VW + lane; i < g.nx; i += 32) add(p[i], q0 + i);
  }
  v[2] = fmin(v[2], double(tlo)), v[3] = fmax(v[3], double(thi));
  block_reduce<Reduce::Sum, Reduce::Sum, Reduce::Min, Reduce::Max, Reduce::Sum, Reduce::Min>(v, partials);
}

// W consecutive points of a row: one 16-byte vector (W = V<T>::n) or one point (W = 1).
template <class T, int W>
struct Pts {
  T e[W];
};
template <class T, int W>
__device__ __forceinline__ Pts<T, W> ldg_pts(const T* p) {
  Pts<T, W> r;
  if constexpr (W == 1) {
    r.e[0] = __ldg(p);
  } else {
    const V<T> v = ldg16(p);
#pragma unroll
    for (int e = 0; e < W; ++e) r.e[e] = v.e[e];
  }
  return r;
}

// The leapfrog energy density, summed per block. A thread walks W points of a row (a 16-byte
// vector where the rows are whole vectors, else one point) through a chunk of planes, holding
// u(t - dt) of the 2R + 1 planes around the current one in registers, so that each plane of both
// fields is read from memory once; the x and y neighbours are vectors too, read through L1 from
// the rows the block's other threads read (a warp a row, 32 x 8 threads a block). The next
// plane's two values are loaded before the current one is used (two planes in flight).
constexpr int kEnergyX = 32, kEnergyY = kReduceThreads / 32;
template <class T, int R, int W>
__global__ void __launch_bounds__(kReduceThreads)
    wave_energy_kernel(GridView<T> u, GridView<T> prev, const StencilCoeffs<T>* __restrict__ co, double c2,
                       double inv_dt, int zchunk, double* partials) {
  constexpr int XV = (R + W - 1) / W;  // vectors of x neighbours on each side
  using P = Pts<T, W>;
  const StencilCoeffs<T> c = *co;
  const int tiles_x = (u.nx / W + kEnergyX - 1) / kEnergyX, tiles_y = (u.ny + kEnergyY - 1) / kEnergyY;
  const long long tiles = (long long)tiles_x * tiles_y, items = tiles * ((u.nz + zchunk - 1) / zchunk);
  double v[1] = {0};
  for (long long it = blockIdx.x; it < items; it += gridDim.x) {
    const long long tile = it % tiles;
    const int i = (int(tile % tiles_x) * kEnergyX + int(threadIdx.x & 31)) * W;
    const int j = int(tile / tiles_x) * kEnergyY + int(threadIdx.x >> 5);
    const int z0 = int(it / tiles) * zchunk, z1 = min(z0 + zchunk, u.nz);
    if (i >= u.nx || j >= u.ny) continue;
    const T* p = &prev(i, j, 0);
    const T* q = &u(i, j, 0);
    P col[2 * R + 1];  // u(t - dt) at planes z - R .. z + R
#pragma unroll
    for (int d = 1; d <= 2 * R; ++d) col[d] = ldg_pts<T, W>(p + (z0 - R - 1 + d) * prev.sz);
    P pn = ldg_pts<T, W>(p + (z0 + R) * prev.sz), un = ldg_pts<T, W>(q + z0 * u.sz);  // plane z0's new values
    for (int z = z0; z < z1; ++z) {
#pragma unroll
      for (int d = 0; d < 2 * R; ++d) col[d] = col[d + 1];
      col[2 * R] = pn;
      const P uz = un;
      if (z + 1 < z1) pn = ldg_pts<T, W>(p + (z + 1 + R) * prev.sz), un = ldg_pts<T, W>(q + (z + 1) * u.sz);
      const T* pz = p + z * prev.sz;
      P xs[2 * XV], ys[2 * R];  // the x neighbours' vectors (left, right); the rows j - R .. j + R but j
#pragma unroll
      for (int h = 0; h < XV; ++h)
        xs[h] = ldg_pts<T, W>(pz - (XV - h) * W), xs[XV + h] = ldg_pts<T, W>(pz + (1 + h) * W);
#pragma unroll
      for (int d = 1; d <= R; ++d)
        ys[R - d] = ldg_pts<T, W>(pz - d * prev.sy), ys[R + d - 1] = ldg_pts<T, W>(pz + d * prev.sy);
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const double lp = laplacian<R>(c, col[R].e[e], [&](int axis, int d) {
          if (axis == 2) return col[R + d].e[e];
          if (axis == 1) return ys[d < 0 ? R + d : R + d - 1].e[e];
          const int x = e + d;  // -R .. W - 1 + R
          return x < 0   ? xs[XV + x / W - (x % W != 0)].e[(x % W + W) % W]
                 : x < W ? col[R].e[x]
                         : xs[XV + (x - W) / W].e[(x - W) % W];
        });
        const double uv = uz.e[e], vel = (uv - double(col[R].e[e])) * inv_dt;
        v[0] += 0.5 * vel * vel - 0.5 * c2 * uv * lp;
      }
    }
  }
  block_reduce<Reduce::Sum>(v, partials);
}

template <class T>
__global__ void add_point_kernel(GridView<T> g, int i, int j, int k, T value, bool images) {
  const T v = g(i, j, k) + value;
  g(i, j, k) = v;
  if (!images) return;
  // Every halo point whose periodic image (i, j, k) is: per axis the point itself, and its copy
  // n further or n back where that lies in the halo.
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) {
        const int ii = i + (a == 1 ? g.nx : a == 2 ? -g.nx : 0), jj = j + (b == 1 ? g.ny : b == 2 ? -g.ny : 0);
        const int kk = k + (c == 1 ? g.nz : c == 2 ? -g.nz : 0);
        if ((a | b | c) && ii >= -g.r && ii < g.nx + g.r && jj >= -g.r && jj < g.ny + g.r && kk >= -g.r &&
            kk < g.nz + g.r)
          g(ii, jj, kk) = v;
      }
}

// Blocks of a reduction: one per row of the interior, at most max_blocks (each walks rows).
int reduce_blocks(long long rows, int max_blocks) { return int(std::max(1LL, std::min<long long>(max_blocks, rows))); }

}  // namespace

template <class T>
void launch_halo_fill(const HaloFill<T>& f, Boundary bc, cudaStream_t s, int z_sides) {
  if (f.count == 0) return;
  const GridView<T>& g = f.grids[0];
  HaloLaunch<T> a{f, bc, z_sides & 1 ? g.r : 0, z_sides & 2 ? g.r : 0, 0, 0};
  a.plane_blocks = ceil_div((long long)(g.nx + 2 * g.r) * (g.ny + 2 * g.r), kHaloBlockPoints);
  a.face_blocks = f.y_faces ? ceil_div(2LL * g.r * (g.nx + 2 * g.r + (f.x_faces ? g.ny : 0)), kHaloBlockPoints) : 0;
  const long long blocks = (long long)(a.lo_planes + a.hi_planes) * a.plane_blocks + (long long)g.nz * a.face_blocks;
  if (blocks == 0) return;
  // The kernel indexes a plane's points with ints.
  if (blocks > 0x7fffffffLL || (long long)(g.nx + 2 * g.r) * (g.ny + 2 * g.r) > 0x7fffffffLL)
    throw Error("halo fill: grid too large for one launch");
  halo_fill_kernel<T><<<dim3(unsigned(blocks), unsigned(f.count)), kHaloThreads, 0, s>>>(a);
  TIERSIM_CUDA_CHECK_LAUNCH("halo_fill_kernel", std::to_string(f.count) + " grids of " + std::to_string(g.nx) + "x" +
                                                    std::to_string(g.ny) + "x" + std::to_string(g.nz));
}

template <class T>
void prepare_halo_fill() {
  cudaFuncAttributes attr{};
  TIERSIM_CUDA_CHECK(cudaFuncGetAttributes(&attr, halo_fill_kernel<T>), "halo_fill_kernel");
}

template <class T>
int launch_field_stats(const GridView<T>& g, double* partials, int max_blocks, cudaStream_t s) {
  const int blocks = reduce_blocks(((long long)g.ny * g.nz + kStatsWarps - 1) / kStatsWarps, max_blocks);
  field_stats_kernel<T><<<blocks, kReduceThreads, 0, s>>>(g, partials);
  TIERSIM_CUDA_CHECK_LAUNCH("field_stats_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
int launch_wave_energy(const GridView<T>& u, const GridView<T>& prev, const StencilCoeffs<T>* co, double c2,
                       double inv_dt, double* partials, int max_blocks, cudaStream_t s) {
  // Rows of whole vectors: a thread a vector (interior rows start on a 128-byte line, and the
  // padding beyond the halo holds the x neighbours' vectors that reach past it).
  constexpr int VW = V<T>::n;
  const bool vec = u.nx % VW == 0;
  // Chunks of z enough for about max_blocks tiles in all, each at least 16R planes long (a chunk
  // reads 2R planes of u(t - dt) beyond its own).
  const long long tiles = (long long)ceil_div(u.nx / (vec ? VW : 1), kEnergyX) * ceil_div(u.ny, kEnergyY);
  const int chunks = int(std::clamp<long long>(max_blocks / tiles, 1, std::max(1, u.nz / (16 * u.r))));
  const int zchunk = ceil_div(u.nz, chunks);
  const int blocks = int(std::min<long long>(max_blocks, tiles * ceil_div(u.nz, zchunk)));
  auto go = [&](auto r) {
    constexpr int R = decltype(r)::value;
    if (vec)
      wave_energy_kernel<T, R, VW><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, zchunk, partials);
    else
      wave_energy_kernel<T, R, 1><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, zchunk, partials);
  };
  switch (u.r) {
    case 1:
      go(std::integral_constant<int, 1>{});
      break;
    case 2:
      go(std::integral_constant<int, 2>{});
      break;
    case 3:
      go(std::integral_constant<int, 3>{});
      break;
    default:
      go(std::integral_constant<int, 4>{});
      break;
  }
  TIERSIM_CUDA_CHECK_LAUNCH("wave_energy_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
void launch_add_point(const GridView<T>& g, int i, int j, int k, T value, bool images, cudaStream_t s) {
  add_point_kernel<T><<<1, 1, 0, s>>>(g, i, j, k, value, images);
  TIERSIM_CUDA_CHECK_LAUNCH("add_point_kernel", "source point");
}

#define TIERSIM_STENCIL_FIELD_KERNELS(T)                                                                              \
  template void launch_halo_fill<T>(const HaloFill<T>&, Boundary, cudaStream_t, int);                                 \
  template void prepare_halo_fill<T>();                                                                               \
  template int launch_field_stats<T>(const GridView<T>&, double*, int, cudaStream_t);                                 \
  template int launch_wave_energy<T>(const GridView<T>&, const GridView<T>&, const StencilCoeffs<T>*, double, double, \
                                     double*, int, cudaStream_t);                                                     \
  template void launch_add_point<T>(const GridView<T>&, int, int, int, T, bool, cudaStream_t);
TIERSIM_STENCIL_FIELD_KERNELS(float)
TIERSIM_STENCIL_FIELD_KERNELS(double)
#undef TIERSIM_STENCIL_FIELD_KERNELS

}  // namespace tiersim::cuda
