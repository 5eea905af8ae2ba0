// --tiling shared, ring family (stencil_prefetch.cuh has the tile and queue it shares): every
// plane of the tile and its halos goes global -> shared ahead of use into a ring of shared
// buffers, by cp.async or, at R = 4 on Hopper, by the bulk tensor copy (TMA); in clusters of
// tiles paced plane by plane from R = 2 on Hopper. Default at R = 2..4 for the heat equation's
// traffic in fp32 (stencil_shapes.cuh). Included by the files that instantiate shapes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "kernels/cuda/kernel_setup.hpp"
#include "kernels/cuda/stencil_coeff_bank.cuh"
#include "kernels/cuda/stencil_tile.cuh"

namespace tiersim::cuda {
namespace {

// Ring shape (Tile's, with NB buffers of whole planes instead of the halo ring).
#pragma nv_diag_suppress 177
// Ring variant: every plane of the tile with its halos goes global -> shared by cp.async,
// D = R + P planes ahead, into a ring of D + 1 buffers, so the loads in flight cost shared
// memory instead of registers (the register-prefetch kernel, stencil_prefetch.cuh, holds PF planes of loads in
// registers, which at R = 4 caps it at 16 warps and 16 KB in flight per SM). The z queue keeps
// only planes z-R .. z+R of the thread's own vectors (2R + 1 slots, unrolled by that length),
// the newest read from the ring.
//
// TMA = true: each plane (tile and halo of every field) is one bulk tensor copy issued by one
// thread and completing on the buffer's mbarrier, instead of 2-6 cp.async per thread with their
// address arithmetic; the box lands in the same layout.
//
// XW (the TMA ring, periodic x read wrapped: Args::xwraps): beside each field's plane two column
// blocks of the tile's rows by its x halo (XH vectors), filled by a second, narrow tensor copy in
// the tiles at the x ends: left, the last XH vectors of each row; right, the first. The threads
// whose x halo lies beyond an end read it there (Sides), so no kernel and no fill writes the x
// halos: the update's stores of them (a 32-byte sector at each end of every row, scattered
// writes) cost the DRAM more than their bytes (Nsight Compute, heat R = 4 on an H200: 2.7% more
// bytes, 7.4% more time), and a tensor copy cannot wrap. YW (where shared memory allows): two
// row blocks of R rows by the tile's width likewise, for the tiles at the y ends (Args::ywraps),
// so that a periodic step on one GPU needs no halo fill at all. (A box that landed the wrapped
// rows in the tile's own halo rows would have to start at a row offset that is not a multiple of
// 128 bytes, which a tensor copy's destination must be.)
template <class T, int R, int NS, int BY, int P, int RY, bool TMA = false, bool XW = false, bool YW = false>
struct Ring {
  using K = Tile<T, R, NS, BY, 1, RY>;
  static constexpr int D = R + P;                      // planes copied ahead of the current one
  static constexpr int NB = D + 1;                     // ring buffers
  static constexpr int Q = 2 * R + 1;                  // register queue
  static constexpr int NRW = (K::ROWS + BY - 1) / BY;  // rows copied per warp and plane
  // One field's plane, rounded up to 128 bytes (a bulk tensor copy's destination alignment).
  static constexpr int PS = (K::ROWS * K::SW * int(sizeof(T)) + 127) / 128 * 128 / int(sizeof(T));
  static constexpr int XV = K::XH * K::VW;  // x-halo columns per side
  // XW: one column block (rows x XV, 128-byte aligned).
  static constexpr int SIDE = XW ? (K::ROWS * XV * int(sizeof(T)) + 127) / 128 * 128 / int(sizeof(T)) : 0;
  // YW: one row block (R x SW, 128-byte aligned).
  static constexpr int YSIDE = YW ? (R * K::SW * int(sizeof(T)) + 127) / 128 * 128 / int(sizeof(T)) : 0;
  static constexpr int FS = PS + 2 * SIDE + 2 * YSIDE;  // a field's stride in a buffer
  static constexpr std::size_t ring_bytes = std::size_t(NB) * K::NS * FS * sizeof(T);
  static constexpr std::size_t smem_bytes = ring_bytes + (TMA ? NB * sizeof(std::uint64_t) : 0);
  static constexpr unsigned box_bytes = unsigned(K::ROWS * K::SW * sizeof(T));
  static constexpr unsigned side_bytes = unsigned(K::ROWS * XV * sizeof(T));
  static constexpr unsigned yside_bytes = unsigned(R * K::SW * sizeof(T));
};
#pragma nv_diag_default 177

// The kernels that read x wrapped (StencilLaunch::xwraps): the TMA ring, but the wave's at R = 4
// and in fp64 at R = 3, at the edge of their registers (fp64 R = 4 at 255, built without the x
// halo's stores either; at 512^3 on an H200 the selects of the reads' addresses took the fp32
// R = 4 update from 0.4674 to 0.4925 ms, the fp64 R = 3 one from 0.8687 to 0.9229 ms), and
// Gray-Scott's at R = 4 (1.0189 -> 1.0371 ms on an H100, even on an H200). They read y wrapped
// too where the row blocks fit in shared memory (every heat and wave shape; Gray-Scott's 16 x 1
// rings and its 8 x 2 at R = 2).
template <class T, class Eq, int R, bool TMA>
constexpr bool kRingXWrapsBuilt = (TMA && kXImagesBuilt<T, Eq, R> &&
                                   !(Eq::kPreviousLevel && (R == 4 || (R == 3 && sizeof(T) == 8))) &&
                                   !(Eq::kFields == 2 && R == 4));
// The bulk copy's L2 promotion: 256-byte blocks around each miss, or only the sectors asked for.
// Without it the heat ring reads 5-6% fewer DRAM bytes in the same time (Nsight Compute, heat
// fp32 512^3 on an H200: R = 2 619 -> 585 MB a step, R = 4 632 -> 598 MB), and the wave (both
// precisions; it reads u(t - dt) beside the copies) and fp64 from R = 3 run faster without it (the
// wave fp32 R = 1 on an H100: 91.5 -> 96.7% of copy), while one field in fp32 and Gray-Scott ran
// 0.4-1.6 points slower and fp64 at R = 2 even (docs/performance.md, "The bulk copy's L2 promotion").
template <class T, class Eq, int R>
constexpr bool kTmaPromote = !Eq::kPreviousLevel && !(sizeof(T) == 8 && R >= 3);
template <class T, class Eq, int R, int BY, int P, int RY, bool TMA>
constexpr bool kRingYWrapsBuilt = (kRingXWrapsBuilt<T, Eq, R, TMA> &&
                                   Ring<T, R, Eq::kFields, BY, P, RY, TMA, true, true>::smem_bytes <= 227 * 1024);

template <class T, int R, class Eq, int BY, int P, int RY, bool TMA, class C>
__device__ __forceinline__ void ring_body(const Args<T, Eq>& a, const C& co, const TmaMaps& maps) {
  using K = Tile<T, R, Eq::kFields, BY, 1, RY>;
  constexpr bool XW = kRingXWrapsBuilt<T, Eq, R, TMA>, YW = kRingYWrapsBuilt<T, Eq, R, BY, P, RY, TMA>;
  using G = Ring<T, R, Eq::kFields, BY, P, RY, TMA, XW, YW>;
  constexpr int VW = K::VW, XH = K::XH, SW = K::SW, NS = K::NS, TY = K::TY, ROWS = K::ROWS;
  constexpr int Q = G::Q, NB = G::NB, D = G::D, FS = G::FS, XV = G::XV;
  constexpr bool CS = kStreamingBuilt<T, Eq, R>;  // streaming outputs and u(t - dt)
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  std::uint64_t* const bars = reinterpret_cast<std::uint64_t*>(smem_raw + G::ring_bytes);  // TMA: one per buffer
  constexpr int kBuf = NS * FS;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx0 = blockIdx.x * K::TX, by0 = blockIdx.y * TY;
  const int x0 = bx0 + tx * VW, y0 = by0 + ty * RY;
  const unsigned img = XW && a.xwraps ? 0u : x_images<R>(a, x0);
  const int z0 = chunk_start(a), z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  const bool xin = x0 < a.xlimit;
  const long long off = x0 + y0 * sy;
  const T* in[2] = {a.in0, a.in1};
  const int s_own = (ty * RY + R) * SW + XH * VW + tx * VW;
  const int wraps = kRingWrapsBuilt<T, Eq, R> ? a.wraps : 0;

  // Copy roles: warp w copies shared rows w, w + BY, ... (global row by0 - R + row): lane tx the
  // tile vector at x0, lanes 0..2XH-1 also one x-halo vector each.
  const int hx_x = tx < XH ? bx0 - (XH - tx) * VW : bx0 + K::TX + (tx - XH) * VW;
  const int dxh = hx_x - x0;  // x-halo vector relative to the lane's tile vector
  const bool hx_lane = tx < 2 * XH && hx_x < a.xlimit;
  long long c_off[G::NRW];
  int c_s[G::NRW];
  bool c_ok[G::NRW];
#pragma unroll
  for (int i = 0; i < G::NRW; ++i) {
    const int row = ty + i * BY, gy = by0 - R + row;
    c_ok[i] = row < ROWS && gy < a.ny + R;
    c_off[i] = x0 + (long long)gy * sy;
    c_s[i] = row * SW + XH * VW + tx * VW;
  }
  const bool issuer = tx == 0 && ty == 0;
  // XW, YW: which column and row blocks this tile copies (its halo lies beyond an x or a y end),
  // and where this thread reads the halo vectors that lie there (Sides).
  const bool xw = XW && a.xwraps, yw = YW && a.ywraps;
  const bool side_l = xw && bx0 == 0, side_r = xw && min(bx0 + K::TX, a.nx) + XV - VW >= a.nx;
  const bool side_t = yw && by0 == 0, side_b = yw && min(by0 + TY, a.ny) + R > a.ny;
  Sides<XH, R> sides;
  if (xw && x0 < a.nx && y0 < a.ny) {
    const int row0 = ty * RY + R;  // this thread's first tile row
#pragma unroll
    for (int h = 0; h < 2 * XH; ++h) {
      const int xv = h < XH ? x0 - (XH - h) * VW : x0 + (h - XH + 1) * VW;  // the vector's first column
      const bool left = xv < 0, right = xv >= a.nx;
      if (!left && !right) continue;
      const int col = left ? xv + XV : xv - a.nx;  // its column in the block
      sides.xuse |= 1u << h;
      sides.xdelta[h] = G::PS + (right ? G::SIDE : 0) + row0 * XV + col - s_own;
    }
    if (yw) {
      // Row y0 + t beyond an end: in the block above (y = -R..-1 at its rows 0..R-1) or below
      // (y = ny..ny+R-1 likewise).
#pragma unroll
      for (int j = 0; j < 2 * R; ++j) {
        const int t = j < R ? j - R : RY + j - R, y = y0 + t;
        if (y < 0 || y >= a.ny) sides.yuse |= 1u << j;
      }
      sides.ydelta[0] = G::PS + 2 * G::SIDE + by0 * SW;
      sides.ydelta[1] = G::PS + 2 * G::SIDE + G::YSIDE + (by0 - a.ny - R) * SW;
    }
  }
  auto copy_plane = [&](int z, int b) {
    if constexpr (TMA) {
      if (issuer && z < z1 + R) {
        mbar_expect_tx(bars + b, NS * (G::box_bytes + (int(side_l) + int(side_r)) * G::side_bytes +
                                       (int(side_t) + int(side_b)) * G::yside_bytes));
        const int gz = a.gz0 + wrapped(z, a.nz, wraps), gy = a.gy0 + by0 - R, gx = a.gx0 + bx0 - XH * VW;
#pragma unroll
        for (int f = 0; f < NS; ++f) {
          T* const fb = smem + b * kBuf + f * FS;
          tma_load_3d(fb, &maps.m[f], gx, gy, gz, bars + b);
          if constexpr (XW) {
            if (side_l) tma_load_3d(fb + G::PS, &maps.s[f], a.gx0 + a.nx - XV, gy, gz, bars + b);
            if (side_r) tma_load_3d(fb + G::PS + G::SIDE, &maps.s[f], a.gx0, gy, gz, bars + b);
          }
          if constexpr (YW) {
            const int yb = G::PS + 2 * G::SIDE;
            if (side_t) tma_load_3d(fb + yb, &maps.y[f], gx, a.gy0 + a.ny - R, gz, bars + b);
            if (side_b) tma_load_3d(fb + yb + G::YSIDE, &maps.y[f], gx, a.gy0, gz, bars + b);
          }
        }
      }
      return;
    }
    if (z < z1 + R) {
      const long long zo = wrapped(z, a.nz, wraps) * sz;
      T* const sb = smem + b * kBuf;
#pragma unroll
      for (int i = 0; i < G::NRW; ++i)
        if (ty + i * BY < ROWS) {
          const bool ok = c_ok[i] && xin, okh = c_ok[i] && hx_lane;
#pragma unroll
          for (int f = 0; f < NS; ++f) {
            cp_async16(sb + f * FS + c_s[i], in[f] + (ok ? c_off[i] + zo : 0), ok);
            if (tx < 2 * XH) cp_async16(sb + f * FS + c_s[i] + dxh, in[f] + (okh ? c_off[i] + dxh + zo : 0), okh);
          }
        }
    }
    cp_async_commit();
  };

  // Queue slots 0 .. 2R-1: planes z0-R .. z0+R-1 (straight from global); slot 2R is filled
  // from the ring at the first step. Planes beyond the z ends: from the other end where the
  // launch wraps (StencilLaunch::wraps), as the ring's copies take them.
  V<T> q[NS][RY][Q];
#pragma unroll
  for (int i = 0; i < 2 * R; ++i) {
    const int zz = z0 - R + i;
    const long long zo = wrapped(zz, a.nz, wraps) * sz;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
      for (int f = 0; f < NS; ++f) q[f][r][i] = ok ? ldg16(in[f] + off + r * sy + zo) : zero16<T>();
    }
  }
  if constexpr (TMA) {
    if (issuer) {
      for (int i = 0; i < NB; ++i) mbar_init(bars + i, 1);
      mbar_init_fence();
    }
    __syncthreads();
  }
  unsigned phase = 0;  // TMA: bit i is the parity of buffer i's next completion
#pragma unroll
  for (int i = 0; i < D; ++i) copy_plane(z0 + i, i);
  if constexpr (TMA) {
    // Planes z0 .. z0+R-1 are read at the first steps without a wait of their own (the loop
    // waits for plane z + R): wait for them here, so every buffer's phases are waited in order.
    for (int i = 0; i < R; ++i) {
      mbar_wait(bars + i, 0);
      phase ^= 1u << i;
    }
  }
  PreviousLevelQueue<T, Eq, 2, RY, CS> up;  // the wave's u(t - dt), 2 planes ahead
  up.prime(a, off, x0, y0, z0, z1, sy, sz);

  int b = 0;  // buffer of plane z: (z - z0) mod NB
  for (int zb = z0; zb < z1; zb += Q) {
#pragma unroll
    for (int s = 0; s < Q; ++s) {
      const int z = zb + s;
      if (z >= z1) break;         // block-uniform
      const int c = (R + s) % Q;  // slot of plane z
      up.fetch(a, off, x0, y0, z, z1, sy, sz);
      const int bn = b + R >= NB ? b + R - NB : b + R;  // buffer of plane z + R
      if (a.pace && z > z0) cluster_wait();             // every block of the cluster has started plane z - 1
      if constexpr (TMA) {
        mbar_wait(bars + bn, (phase >> bn) & 1u);  // plane z + R has landed
        phase ^= 1u << bn;
      } else {
        cp_async_wait_group<P - 1>();  // planes up to z + R have landed (this thread's copies)
      }
      __syncthreads();  // ... everyone's; and plane z - 1's buffer is free
      if (a.pace) cluster_arrive();
      copy_plane(z + D, b == 0 ? NB - 1 : b - 1);
      T* const sb = smem + b * kBuf;
      {
        T* const sn = smem + bn * kBuf;
#pragma unroll
        for (int f = 0; f < NS; ++f)
#pragma unroll
          for (int r = 0; r < RY; ++r) q[f][r][(2 * R + s) % Q] = ld16(sn + f * FS + s_own + r * SW);
      }

      T lap[NS][RY][VW];
      gather_laplacians<R, XH, SW>(co, sb, FS, s_own, q, s, lap, sides);
      update_and_store<T, Eq, RY, Q, CS>(a, q, c, lap, up.q[0], x0, y0, off, z, sy, sz, img);
      up.advance();
      if (++b == NB) b = 0;
    }
  }
  if (a.pace) cluster_wait();  // pairs the last arrive
  if constexpr (!TMA) cp_async_wait_group<0>();
}

template <class T, int R, class Eq, bool CONST, int BY, int P, int RY, int MINB, bool TMA>
__global__ void __launch_bounds__(32 * BY, MINB > 0 ? MINB : 1)
    stencil_ring_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco, const __grid_constant__ TmaMaps maps) {
  if constexpr (CONST)
    ring_body<T, R, Eq, BY, P, RY, TMA>(a, const_coeffs<T>(), maps);
  else
    ring_body<T, R, Eq, BY, P, RY, TMA>(a, *gco, maps);
}

// One update with this shape, in clusters of cx x cy tiles where the device can place them.
template <class T, int R, class Eq, bool CONST, int BY, int P, int RY, int MINB = 0, bool TMA = false>
StencilLaunchInfo launch_ring(const StencilLaunch<T, Eq>& l, cudaStream_t s, int cx = 1, int cy = 1) {
  using K = Tile<T, R, Eq::kFields, BY, 1, RY>;
  constexpr bool XW = kRingXWrapsBuilt<T, Eq, R, TMA>, YW = kRingYWrapsBuilt<T, Eq, R, BY, P, RY, TMA>;
  using G = Ring<T, R, Eq::kFields, BY, P, RY, TMA, XW, YW>;
  check_wraps(l, kRingWrapsBuilt<T, Eq, R>);
  Args<T, Eq> a = make_args(l);
  // x read wrapped: rows of whole vectors, and at least a column block of them; y: columns of
  // whole threads' rows (a thread's rows all inside or all beyond the end), at least R of them.
  a.xwraps = XW && l.xwraps && a.nx % K::VW == 0 && a.nx >= G::XV;
  a.ywraps = YW && a.xwraps && a.ny % RY == 0 && a.ny >= R;
  auto kern = stencil_ring_kernel<T, R, Eq, CONST, BY, P, RY, MINB, TMA>;
  TmaMaps maps{};
  if constexpr (TMA) {
    if (l.cc_major < 9) throw Error("stencil: the bulk tensor copy kernel needs a Hopper GPU (compute capability 9.0)");
    a.gx0 = int(a.sy) - a.xlimit, a.gy0 = l.in[0].r, a.gz0 = l.in[0].r;
    for (int f = 0; f < K::NS; ++f) {
      const T* const origin = f ? a.in1 : a.in0;
      maps.m[f] = encode_grid_map(origin, a.sy, a.sz, a.ny, a.nz, l.in[0].r, a.gx0, a.gy0, a.gz0, K::SW, K::ROWS,
                                  kTmaPromote<T, Eq, R>);
      if (a.xwraps)
        maps.s[f] = encode_grid_map(origin, a.sy, a.sz, a.ny, a.nz, l.in[0].r, a.gx0, a.gy0, a.gz0, G::XV, K::ROWS,
                                    kTmaPromote<T, Eq, R>);
      if (a.ywraps)
        maps.y[f] = encode_grid_map(origin, a.sy, a.sz, a.ny, a.nz, l.in[0].r, a.gx0, a.gy0, a.gz0, K::SW, R,
                                    kTmaPromote<T, Eq, R>);
    }
  }
  set_shared_memory_once(reinterpret_cast<const void*>(kern), G::smem_bytes, true, "stencil ring kernel");
  int per_sm = 1;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * BY, G::smem_bytes));
  if (l.prepare) return {"", 0, false, kRingWrapsBuilt<T, Eq, R>, a.xwraps != 0, a.ywraps != 0};
  const long long tx = ceil_div(a.nx, K::TX), ty = ceil_div(a.ny, K::TY);
  int slots = std::max(1, per_sm) * l.sm_count;
  // Cluster of cx x cy tiles marching z in step (ring_body's pacing barrier), so that the halo
  // rows and columns one block reads are still in L2 when its neighbour reads them. Only where
  // the tiles divide evenly (else the cluster turned across, cy x cx, where they divide so) and
  // the device can place such a cluster.
  if ((tx % cx != 0 || ty % cy != 0) && tx % cy == 0 && ty % cx == 0) std::swap(cx, cy);
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  if ((cx > 1 || cy > 1) && tx % cx == 0 && ty % cy == 0 && l.cc_major >= 9) {
    cfg.gridDim = dim3(unsigned(tx), unsigned(ty), 1);
    cfg.blockDim = dim3(32, BY);
    cfg.dynamicSmemBytes = G::smem_bytes;
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(cx), attr[0].val.clusterDim.y = unsigned(cy), attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg) == cudaSuccess && clusters > 0) {
      a.pace = 1;
      slots = std::min(slots, clusters * cx * cy);
    }
    (void)cudaGetLastError();  // an unplaceable cluster is not an error: launch without
  }
  a.zchunk = choose_zchunk_balanced(l.tuning.z_chunk, tx * ty, a.nz, slots, 2 * R + G::D);
  const dim3 grid(unsigned(tx), unsigned(ty), z_chunks(l, a));
  if (a.pace) {
    cfg.gridDim = grid;
    TIERSIM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kern, a, l.coeffs_global, maps), "stencil ring kernel in clusters");
  } else {
    kern<<<grid, dim3(32, BY), G::smem_bytes, s>>>(a, l.coeffs_global, maps);
  }
  std::string name = std::string("stencil_") + Eq::kKernelTag + (TMA ? "_tma_r" : "_ring_r") + std::to_string(R) +
                     "_by" + std::to_string(BY) + "_p" + std::to_string(P);
  if (RY > 1) name += "_ry" + std::to_string(RY);
  if (MINB > 0) name += "_mb" + std::to_string(MINB);
  if (a.pace) name += "_c" + std::to_string(cx) + "x" + std::to_string(cy);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_ring_kernel", grid_text(name, a));
  // Model: per block, every plane of its chunk plus R more (the last R planes feed the queue),
  // each with the tile, its x halo and y-halo rows; the first 2R planes once more (queue
  // prologue, whole vectors); writes once; the previous level (the wave's u(t - dt)) once.
  const double tile_plane = double(K::TY) * K::TX + double(K::TY) * 2 * K::XH * K::VW + 2.0 * R * K::TX;
  const double blocks_xy = double(grid.x) * grid.y, planes = z_planes(l, a);
  const double reads_tiles =
      double(K::NS) * blocks_xy * ((planes + R * grid.z) * tile_plane + 2.0 * R * grid.z * double(K::TY) * K::TX);
  // The column and row blocks of the tiles at the ends (XW, YW), every plane a block loads.
  double sides = 0;
  for (long long bx = 0; bx < tx && a.xwraps; ++bx)
    sides +=
        double(K::ROWS) * G::XV * ((bx == 0) + (std::min<long long>((bx + 1) * K::TX, a.nx) + G::XV - K::VW >= a.nx));
  sides *= double(ty);
  for (long long by = 0; by < ty && a.ywraps; ++by)
    sides += double(tx) * R * K::SW * ((by == 0) + (std::min<long long>((by + 1) * K::TY, a.ny) + R > a.ny));
  const double reads = reads_tiles + double(K::NS) * sides * (double(grid.z) * R + planes);
  const double pts = double(a.nx) * a.ny * planes;
  const double writes = pts * K::NS + (Eq::kPreviousLevel ? pts : 0);
  return {name,
          (reads + writes) * sizeof(T),
          a.images != 0 && kXImagesBuilt<T, Eq, R> && !a.xwraps,
          kRingWrapsBuilt<T, Eq, R>,
          a.xwraps != 0,
          a.ywraps != 0};
}

}  // namespace
}  // namespace tiersim::cuda
