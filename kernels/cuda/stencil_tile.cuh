// What the stencil kernel families share: the argument block, the shape of a shared-memory tile,
// the gather of the Laplacians from a tile and a register queue, the point update and its
// stores (the equation's, through its traits), and the host-side sizing of a launch. Internal to
// the stencil kernel files (internal linkage: each translation unit compiles its own kernels).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

#include "kernels/cuda/stencil_device.cuh"
#include "kernels/cuda/stencil_families.cuh"

namespace tiersim::cuda {
namespace {

// Tensor maps of the ring kernel's TMA variant: one per input field, over the whole allocation
// (halos and row padding), x fastest; a kernel parameter (__grid_constant__), 64-byte aligned.
// Where the launch reads x wrapped (Args::xwraps), s: the columns beyond the x ends, boxes of the
// tile's rows by its x halo.
struct TmaMaps {
  CUtensorMap m[2];
  CUtensorMap s[2];
  CUtensorMap y[2];  // Args::ywraps: the rows beyond the y ends, boxes of R rows by the tile's width
};

// The kernels' argument block: the grids and the equation's point-update parameters.
template <class T, class Eq>
struct Args {
  const T* in0;
  const T* in1;
  const T* prev;
  T* out0;
  T* out1;
  int nx, ny, nz, xlimit, zchunk;
  int zskip;          // planes skipped after the first z chunk (StencilLaunch::z_faces), else 0
  int r;              // halo width
  int images;         // write each row's periodic x halo (StencilLaunch::images, x_images)
  int wraps;          // read the planes beyond the z ends from the other end (StencilLaunch::wraps)
  int xwraps;         // read the columns beyond the x ends from the other end (StencilLaunch::xwraps)
  int ywraps;         // and the rows beyond the y ends (the same request; where the kernel can)
  int pace;           // ring kernel in a cluster: one cluster barrier per plane keeps its blocks in step
  int gx0, gy0, gz0;  // interior point (0,0,0) in the tensor maps' coordinates (TMA variant)
  long long sy, sz;
  typename Eq::template Params<T> prm;
};

template <class T, class Eq>
Args<T, Eq> make_args(const StencilLaunch<T, Eq>& l) {
  Args<T, Eq> a;
  a.in0 = l.in[0].origin;
  a.in1 = l.in[Eq::kFields - 1].origin;  // one field: in1 == in0, never read
  a.prev = l.prev ? l.prev : l.in[0].origin;
  a.out0 = l.out[0].origin;
  a.out1 = l.out[Eq::kFields - 1].origin;
  a.nx = l.in[0].nx, a.ny = l.in[0].ny, a.nz = l.in[0].nz;
  a.xlimit = l.xlimit;
  a.sy = l.in[0].sy, a.sz = l.in[0].sz;
  a.prm = l.params;
  a.zchunk = 0;
  a.zskip = 0;
  a.r = l.in[0].r;
  a.images = l.images;
  a.wraps = l.wraps;
  a.xwraps = a.ywraps = 0;  // the launcher that reads them wrapped sets them
  a.pace = 0;
  a.gx0 = a.gy0 = a.gz0 = 0;
  return a;
}

// Shape of a shared-memory tile: BY warps along y, each thread RY consecutive rows of VW points
// (one 16-byte vector per row), so a block owns a 32*VW x BY*RY tile of NS fields; PF planes
// loaded ahead. (Not every kernel uses every member of Tile and Ring: nvcc's "declared but never
// referenced" is silenced for these structs, not file-wide.)
#pragma nv_diag_suppress 177
template <class T, int R, int NS_, int BY, int PF, int RY>
struct Tile {
  static constexpr int VW = V<T>::n;            // points per thread and row (one 16-byte vector)
  static constexpr int TX = 32 * VW;            // tile width in points
  static constexpr int TY = BY * RY;            // tile height in rows
  static constexpr int XH = (R + VW - 1) / VW;  // halo vectors per side in x
  static constexpr int SW = TX + 2 * XH * VW;   // shared row width in points
  static constexpr int ROWS = TY + 2 * R;
  static constexpr int NS = NS_;                     // fields read with halos
  static constexpr int Q = 2 * R + PF;               // register queue: planes z-R .. z+R+PF-1
  static constexpr int NB = PF + 1;                  // shared buffers: plane z and PF planes of halo in flight
  static constexpr int HYI = (2 * R + BY - 1) / BY;  // y-halo rows per warp (2R rows over BY warps)
  static constexpr std::size_t smem_bytes = std::size_t(NB) * NS * ROWS * SW * sizeof(T);
};
#pragma nv_diag_default 177

// Halo vectors a thread reads from elsewhere than beside its own rows in the tile (the ring's
// column and row blocks copied from the other end: Args::xwraps, ywraps). x: bit h of xuse for
// vector h of the 2 XH it reads in each row (the XH left of its own, then the XH right), at own +
// xdelta[h] + r XH VW for row r (a block of XH vectors per tile row). y: bit j of yuse for y-halo
// row j (the R above its rows, then the R below), at own + ydelta[above ? 0 : 1] + t SW for row
// offset t (a block of R rows of the tile's width). All zero: the tile's halos.
template <int XH, int R>
struct Sides {
  unsigned xuse = 0, yuse = 0;
  int xdelta[2 * XH] = {};
  int ydelta[2] = {};
};

// The Laplacians of this thread's RY rows of VW points of plane z, every field: x and y neighbours
// from the plane's tile in shared memory (field f's at tile + f * field_stride, this thread's first
// vector at offset own_offset in it, rows SW points apart; halo vectors from `sides` where it
// says so), z neighbours from the register queue q (plane z + d in slot (R + s + d) mod Q; s: the
// step of the unrolled z loop).
template <int R, int XH, int SW, class T, int NS, int RY, int Q, class C>
__device__ __forceinline__ void gather_laplacians(const C& co, const T* tile, int field_stride, int own_offset,
                                                  const V<T> (&q)[NS][RY][Q], int s, T (&lap)[NS][RY][V<T>::n],
                                                  const Sides<XH, R>& sides = Sides<XH, R>{}) {
  constexpr int VW = V<T>::n;
  const int c = (R + s) % Q;  // slot of plane z
#pragma unroll
  for (int f = 0; f < NS; ++f) {
    const T* const own = tile + f * field_stride + own_offset;
    // y neighbours outside this thread's rows: rows -R..-1 and RY..RY+R-1 (index t + R).
    V<T> ys[RY + 2 * R];
#pragma unroll
    for (int t = -R; t < RY + R; ++t)
      if (t < 0 || t >= RY) {
        const bool side = (sides.yuse >> (t < 0 ? t + R : t - RY + R)) & 1u;
        ys[t + R] = ld16(own + t * SW + (side ? sides.ydelta[t < 0 ? 0 : 1] : 0));
      }
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const T* const row = own + r * SW;
      V<T> xs[2 * XH + 1];
#pragma unroll
      for (int h = 0; h < XH; ++h) {
        const bool sl = (sides.xuse >> h) & 1u, sr = (sides.xuse >> (XH + h)) & 1u;
        xs[h] = ld16(sl ? own + sides.xdelta[h] + r * XH * VW : row - (XH - h) * VW);
        xs[XH + 1 + h] = ld16(sr ? own + sides.xdelta[XH + h] + r * XH * VW : row + (1 + h) * VW);
      }
      xs[XH] = q[f][r][c];
#pragma unroll
      for (int e = 0; e < VW; ++e) {
        lap[f][r][e] = laplacian<R>(co, q[f][r][c].e[e], [&](int axis, int d) -> T {
          if (axis == 0) {
            const int idx = XH * VW + e + d;
            return xs[idx / VW].e[idx % VW];
          }
          if (axis == 1) {
            const int t = r + d;
            return t >= 0 && t < RY ? q[f][t][c].e[e] : ys[t + R].e[e];
          }
          return q[f][r][(R + s + d + Q) % Q].e[e];
        });
      }
    }
  }
}

// The periodic x halo a thread writes with its rows (Args::images): the whole 32-byte sector next
// to each end of the row, beyond x = nx the sector of x = 0..W-1 (bit 0: this thread holds part
// of it), before x = 0 that of x = nx-W..nx-1 (bit 1); points of those sectors past r are row
// padding, never read. Whole sectors (no sector written in part), and a thread's choice fixed
// for the kernel, so that the update's loop only gains two predicated stores per row. The
// engine asks for it only where nx is a multiple of W and the row's padding holds a sector
// (x_images_fit).
// Kernels built without those stores: the wave in fp64 at R = 4 (255 registers: with the stores
// compiled in, even when not taken, ptxas spills and the kernel ran at 75% of copy on an H200
// against 86% without); its launches report x_images false, and the fill writes them.
template <class T, class Eq, int R>
constexpr bool kXImagesBuilt = !(Eq::kPreviousLevel && std::is_same_v<T, double> && R == 4);
// Kernels whose outputs and u(t - dt) go by streaming accesses (stcs16, ldcs16: evict-first in the
// L2): the wave in fp64 at R = 4, whose update they made 4.2% faster on an H200 and 3.0% on an H100
// at 512^3 (2-4% fewer DRAM reads). Elsewhere they made the updates at most 0.5% faster and up to
// 5.6% slower on an H200 (docs/performance.md, "Streaming accesses").
template <class T, class Eq, int R>
constexpr bool kStreamingBuilt = (Eq::kPreviousLevel && std::is_same_v<T, double> && R == 4);

// The same kernel (its 255 registers) is built without wrapped z planes (StencilLaunch::wraps):
// with them its update took 5.6% longer at 512^3 on an H200 (0.9630 -> 1.0174 ms), more than the
// z planes of the fill it saves (0.009 ms).
template <class T, class Eq, int R>
constexpr bool kRingWrapsBuilt = kXImagesBuilt<T, Eq, R>;

template <int R, class T, class Eq>
__device__ __forceinline__ unsigned x_images(const Args<T, Eq>& a, int x0) {
  constexpr int W = kXHaloSectorPoints<T>;
  if constexpr (!kXImagesBuilt<T, Eq, R>) return 0u;
  return a.images ? unsigned(x0 < W) | unsigned(x0 >= a.nx - W && x0 < a.nx) << 1 : 0u;
}

// The updates and stores of this thread's RY rows of VW points of plane z: the equation's point
// update from the centre values (queue slot c of q), the Laplacians and, with a previous level,
// u(t - dt) (up), then one 16-byte store per row and field (streaming where CS, kStreamingBuilt;
// element stores at the grid's right edge), and where img says so the row's periodic x halo
// (x_images); off: this thread's first point in its plane, sy and sz: the strides.
template <class T, class Eq, int RY, int Q, bool CS = false>
__device__ __forceinline__ void update_and_store(const Args<T, Eq>& a, const V<T> (&q)[Eq::kFields][RY][Q], int c,
                                                 const T (&lap)[Eq::kFields][RY][V<T>::n], const V<T> (&up)[RY], int x0,
                                                 int y0, long long off, int z, long long sy, long long sz,
                                                 unsigned img) {
  constexpr int NS = Eq::kFields, VW = V<T>::n;
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    if (y0 + r < a.ny && x0 < a.nx) {
      V<T> o[NS];
#pragma unroll
      for (int e = 0; e < VW; ++e) {
        T u[NS], l[NS], out[NS];
#pragma unroll
        for (int f = 0; f < NS; ++f) u[f] = q[f][r][c].e[e], l[f] = lap[f][r][e];
        Eq::update(a.prm, u, l, Eq::kPreviousLevel ? up[r].e[e] : T(0), out);
#pragma unroll
        for (int f = 0; f < NS; ++f) o[f].e[e] = out[f];
      }
      const long long at = off + r * sy + z * sz;
      T* const p0 = a.out0 + at;
      T* const p1 = NS == 2 ? a.out1 + at : nullptr;
      auto st = [](T* p, const V<T>& v) {
        if constexpr (CS)
          stcs16(p, v);
        else
          st16(p, v);
      };
      if (x0 + VW <= a.nx) {
        st(p0, o[0]);
        if constexpr (NS == 2) st(p1, o[NS - 1]);
      } else {
        for (int e = 0; e < VW && x0 + e < a.nx; ++e) {
          p0[e] = o[0].e[e];
          if constexpr (NS == 2) p1[e] = o[NS - 1].e[e];
        }
      }
      // The row's periodic x halo, from the values in hand (see x_images).
      if (img & 1) {
        st(p0 + a.nx, o[0]);
        if constexpr (NS == 2) st(p1 + a.nx, o[NS - 1]);
      }
      if (img & 2) {
        st(p0 - a.nx, o[0]);
        if constexpr (NS == 2) st(p1 - a.nx, o[NS - 1]);
      }
    }
  }
}

// The previous time level (the wave's u(t - dt)) beside a z march: only its centre values are
// read, so they bypass the tile and come N planes ahead into registers, q[0] plane z's rows, by
// 16-byte loads (streaming where CS, kStreamingBuilt); zeros beyond the thread's rows and columns
// and the chunk's planes. Where the equation has no previous level it loads nothing (q[0], which
// the point update then ignores, stays one unset plane).
template <class T, class Eq, int N, int RY, bool CS>
struct PreviousLevelQueue {
  static constexpr bool kOn = Eq::kPreviousLevel;
  V<T> q[kOn ? N : 1][RY];
  V<T> next[RY];  // plane z + N, loaded at plane z (fetch) and queued once z is done (advance)

  __device__ __forceinline__ static V<T> load(const Args<T, Eq>& a, long long off, int x0, int y0, int r, int z, int z1,
                                              long long sy, long long sz) {
    if constexpr (CS)
      return y0 + r < a.ny && x0 < a.nx && z < z1 ? ldcs16(a.prev + off + r * sy + z * sz) : zero16<T>();
    else
      return y0 + r < a.ny && x0 < a.nx && z < z1 ? ld16(a.prev + off + r * sy + z * sz) : zero16<T>();
  }
  // Planes z0 .. z0 + N - 1.
  __device__ __forceinline__ void prime(const Args<T, Eq>& a, long long off, int x0, int y0, int z0, int z1,
                                        long long sy, long long sz) {
    if constexpr (kOn) {
#pragma unroll
      for (int i = 0; i < N; ++i)
#pragma unroll
        for (int r = 0; r < RY; ++r) q[i][r] = load(a, off, x0, y0, r, z0 + i, z1, sy, sz);
    }
  }
  // At plane z: plane z + N's loads in flight while z is computed.
  __device__ __forceinline__ void fetch(const Args<T, Eq>& a, long long off, int x0, int y0, int z, int z1,
                                        long long sy, long long sz) {
    if constexpr (kOn) {
#pragma unroll
      for (int r = 0; r < RY; ++r) next[r] = load(a, off, x0, y0, r, z + N, z1, sy, sz);
    }
  }
  // Plane z done: the queue moves on by one plane.
  __device__ __forceinline__ void advance() {
    if constexpr (kOn) {
#pragma unroll
      for (int i = 0; i + 1 < N; ++i)
#pragma unroll
        for (int r = 0; r < RY; ++r) q[i][r] = q[i + 1][r];
#pragma unroll
      for (int r = 0; r < RY; ++r) q[N - 1][r] = next[r];
    }
  }
};

// Plane (StencilLaunch::wraps) or row (Args::ywraps) i of the grid in memory (i within R of the
// interior, n >= R), wrapped into [0, n) where the launch reads the periodic images itself.
__device__ __forceinline__ int wrapped(int i, int n, int wraps) { return wraps ? periodic_index(i, n) : i; }

// ---- host side of a launch --------------------------------------------------------------------
inline int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// The first plane of block z's chunk: chunks of a.zchunk planes, and over the two z faces
// (StencilLaunch::z_faces) the second chunk a.zskip planes further on.
template <class T, class Eq>
__device__ __forceinline__ int chunk_start(const Args<T, Eq>& a) {
  return int(blockIdx.z) * a.zchunk + (blockIdx.z > 0 ? a.zskip : 0);
}

// The launch's z extent, once a.zchunk is chosen: nz / zchunk chunks, or, over the two z faces of
// the grid (StencilLaunch::z_faces = f), two chunks of f planes, [0, f) and [nz - f, nz).
template <class T, class Eq>
unsigned z_chunks(const StencilLaunch<T, Eq>& l, Args<T, Eq>& a) {
  if (l.z_faces <= 0) return unsigned(ceil_div(a.nz, a.zchunk));
  if (2 * l.z_faces >= a.nz)
    throw Error("stencil: z faces of " + std::to_string(l.z_faces) + " planes overlap in " + std::to_string(a.nz));
  a.zchunk = l.z_faces, a.zskip = a.nz - 2 * l.z_faces;
  return 2;
}
// The planes a launch updates (for its cost model).
template <class T, class Eq>
int z_planes(const StencilLaunch<T, Eq>& l, const Args<T, Eq>& a) {
  return l.z_faces > 0 ? 2 * l.z_faces : a.nz;
}

// z planes per block: about two waves of blocks over the device when the grid allows, never
// fewer than 4R planes (each chunk re-reads 2R planes).
inline int choose_zchunk(int requested, long long tiles_xy, int nz, int slots, int R) {
  if (requested > 0) return std::min(requested, nz);
  const long long chunks = std::max<long long>(1, (2LL * slots) / std::max<long long>(1, tiles_xy));
  int zc = ceil_div(nz, chunks);
  return std::min(nz, std::max(zc, 4 * R));
}

// z planes per block for the ring kernel: the chunk count that minimises (waves of blocks) x
// (planes per block + the planes each block loads before its first output), so that the last
// wave is not a small fraction of the others (at 512^3 the rule above gave 1.55 waves for some
// shapes: 7 points of copy bandwidth lost).
inline int choose_zchunk_balanced(int requested, long long tiles_xy, int nz, int slots, int overhead) {
  if (requested > 0) return std::min(requested, nz);
  int best = nz;
  double best_cost = 1e300;
  for (int c = 1; c <= nz; ++c) {
    const int zc = ceil_div(nz, c);
    if (c > 1 && zc < 16) break;
    const double waves = double(ceil_div(tiles_xy * ceil_div(nz, zc), std::max(1, slots)));
    const double cost = waves * (zc + overhead);
    if (cost < best_cost * 0.999) best_cost = cost, best = zc;
  }
  return best;
}

// StencilLaunch::wraps: what the engine promises (a kernel built to wrap, at least R planes, a
// launch over all of them); a launch that breaks it is a programming error.
template <class T, class Eq>
void check_wraps(const StencilLaunch<T, Eq>& l, bool built) {
  if (l.wraps && (!built || l.in[0].nz < l.radius || l.z_faces > 0))
    throw Error("stencil: wrapped periodic reads need a kernel built for them, " + std::to_string(l.radius) +
                " planes and a launch over the whole grid");
}

// "..., grid NXxNYxNZ": what a failed launch names.
template <class A>
std::string grid_text(const std::string& kernel, const A& a) {
  return kernel + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz);
}

}  // namespace
}  // namespace tiersim::cuda
