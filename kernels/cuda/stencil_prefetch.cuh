// --tiling shared, register-prefetch family: 2.5D blocking. A block of BY warps owns a
// 32*VW x BY*RY tile of an x-y plane (VW points per thread and row as one 16-byte vector, RY rows
// per thread) and marches through a chunk of z planes; the z neighbours of a thread's points live
// in a register queue, the z loop unrolled by the queue length so that the queue rotates by
// renaming registers; one barrier per plane; x and y neighbours are 16-byte shared loads
// (conflict-free: a quarter warp reads 128 consecutive bytes). The queue also holds PF planes
// loaded ahead (LDG straight to registers, then stored to a ring of PF + 1 shared buffers); the
// halo rows and columns go global -> shared with cp.async PF planes ahead. MINB > 0 caps the
// registers so that MINB blocks fit on an SM (__launch_bounds__). Default at R = 1 for the heat
// equation's traffic in fp32, and at every R for the other equations and fp64
// (stencil_shapes.cuh). Included by the files that instantiate shapes.
#pragma once

#include <string>

#include "kernels/cuda/kernel_setup.hpp"
#include "kernels/cuda/stencil_coeff_bank.cuh"
#include "kernels/cuda/stencil_tile.cuh"

namespace tiersim::cuda {
namespace {

// The z loop is unrolled by the queue length Q: at step s of a round the queue slot of plane
// z - R + j is (j + s) mod Q, a compile-time index, so the queue rotates by renaming registers
// instead of Q vector moves per plane; the plane loaded at step s goes into slot s, which held
// plane z - R (dead once this plane is computed).
template <class T, int R, class Eq, int BY, int PF, int RY, class C>
__device__ __forceinline__ void shared_body(const Args<T, Eq>& a, const C& co) {
  using K = Tile<T, R, Eq::kFields, BY, PF, RY>;
  constexpr int VW = K::VW, XH = K::XH, SW = K::SW, NS = K::NS, Q = K::Q, NB = K::NB, TY = K::TY;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  constexpr int kBuf = NS * K::ROWS * SW;  // one buffer: NS fields of ROWS rows

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx0 = blockIdx.x * K::TX, by0 = blockIdx.y * TY;
  const int x0 = bx0 + tx * VW, y0 = by0 + ty * RY;  // this thread's first point
  const unsigned img = x_images<R>(a, x0);
  const int z0 = chunk_start(a), z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  const bool xin = x0 < a.xlimit;
  const long long off = x0 + y0 * sy;
  const T* in[2] = {a.in0, a.in1};
  // Shared offset of this thread's vector in its first row (row r adds r * SW).
  const int s_own = (ty * RY + R) * SW + XH * VW + tx * VW;

  // Halo roles. y halo: the 2R rows above and below the tile, row h by warp h mod BY; the rows
  // beyond the y ends from the other end where the launch reads them wrapped (Args::ywraps: one
  // row index per block, so the z loop is the same either way).
  long long hy_off[K::HYI];
  int hy_s[K::HYI];
  bool hy_ok[K::HYI];
#pragma unroll
  for (int i = 0; i < K::HYI; ++i) {
    const int h = ty + i * BY;
    const int ly = h < R ? h - R : TY + h - R;
    hy_ok[i] = h < 2 * R && (a.ywraps || by0 + ly < a.ny + R) && xin;
    hy_off[i] = x0 + (long long)wrapped(by0 + ly, a.ny, a.ywraps) * sy;
    hy_s[i] = (ly + R) * SW + XH * VW + tx * VW;
  }
  // x halo: lanes 0..2XH-1 of every warp copy the XH vectors left and right of its RY rows.
  const int hx_x = tx < XH ? bx0 - (XH - tx) * VW : bx0 + K::TX + (tx - XH) * VW;
  const bool hx_lane = tx < 2 * XH && hx_x < a.xlimit;
  const long long hx_off = hx_x + y0 * sy;
  const int hx_s = (ty * RY + R) * SW + (hx_x - bx0) + XH * VW;

  // Every call commits one group (empty past the chunk), so that wait_group counts planes.
  auto copy_halo = [&](int z, int b) {
    if (z < z1) {
      const long long zo = z * sz;
      T* const sb = smem + b * kBuf;
#pragma unroll
      for (int i = 0; i < K::HYI; ++i)
        if (ty + i * BY < 2 * R) {
#pragma unroll
          for (int f = 0; f < NS; ++f)
            cp_async16(sb + f * K::ROWS * SW + hy_s[i], in[f] + (hy_ok[i] ? hy_off[i] + zo : 0), hy_ok[i]);
        }
      if (tx < 2 * XH) {
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const bool ok = hx_lane && y0 + r < a.ny + R;
#pragma unroll
          for (int f = 0; f < NS; ++f)
            cp_async16(sb + f * K::ROWS * SW + hx_s + r * SW, in[f] + (ok ? hx_off + r * sy + zo : 0), ok);
        }
      }
    }
    cp_async_commit();
  };

  // q[f][r][slot]: planes z0 - R .. z0 + R + PF - 1 in slots 0 .. Q - 1 (beyond the z ends from
  // the other end where the launch wraps, StencilLaunch::wraps).
  V<T> q[NS][RY][Q];
#pragma unroll
  for (int i = 0; i < Q; ++i) {
    const int zz = z0 - R + i;
    const long long zo = wrapped(zz, a.nz, a.wraps) * sz;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
      for (int f = 0; f < NS; ++f) q[f][r][i] = ok ? ldg16(in[f] + off + r * sy + zo) : zero16<T>();
    }
  }
  // Halos of planes z0 .. z0+PF-1 in flight; the previous level (the wave's u(t-dt)) PF planes
  // ahead in registers.
#pragma unroll
  for (int i = 0; i < PF; ++i) copy_halo(z0 + i, i);
  PreviousLevelQueue<T, Eq, PF, RY, false> up;
  up.prime(a, off, x0, y0, z0, z1, sy, sz);

  int b = 0;  // buffer of plane z: (z - z0) mod NB
  for (int zb = z0; zb < z1; zb += Q) {
#pragma unroll
    for (int s = 0; s < Q; ++s) {
      const int z = zb + s;
      if (z >= z1) break;         // block-uniform
      const int c = (R + s) % Q;  // slot of plane z
      // Loads for later planes first, so that they are in flight while this plane is computed.
      V<T> nq[NS][RY];
      {
        const int zz = z + R + PF;
        const long long zo = wrapped(zz, a.nz, a.wraps) * sz;
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
          for (int f = 0; f < NS; ++f) nq[f][r] = ok ? ldg16(in[f] + off + r * sy + zo) : zero16<T>();
        }
      }
      up.fetch(a, off, x0, y0, z, z1, sy, sz);

      cp_async_wait_group<PF - 1>();  // this plane's halo; the PF - 1 later planes may still fly
      T* const sb = smem + b * kBuf;
#pragma unroll
      for (int f = 0; f < NS; ++f)
#pragma unroll
        for (int r = 0; r < RY; ++r) st16(sb + f * K::ROWS * SW + s_own + r * SW, q[f][r][c]);
      __syncthreads();
      // Halo of plane z + PF into the buffer plane z - 1 used: every thread is past computing it.
      copy_halo(z + PF, b + PF >= NB ? b + PF - NB : b + PF);

      T lap[NS][RY][VW];
      gather_laplacians<R, XH, SW>(co, sb, K::ROWS * SW, s_own, q, s, lap);
      update_and_store(a, q, c, lap, up.q[0], x0, y0, off, z, sy, sz, img);

      // Slot s held plane z - R, dead now: it takes plane z + R + PF.
#pragma unroll
      for (int f = 0; f < NS; ++f)
#pragma unroll
        for (int r = 0; r < RY; ++r) q[f][r][s] = nq[f][r];
      up.advance();
      if (++b == NB) b = 0;
    }
  }
  cp_async_wait_group<0>();
}

template <class T, int R, class Eq, bool CONST, int BY, int PF, int RY, int MINB>
__global__ void __launch_bounds__(32 * BY, MINB > 0 ? MINB : 1)
    stencil_shared_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST)
    shared_body<T, R, Eq, BY, PF, RY>(a, const_coeffs<T>());
  else
    shared_body<T, R, Eq, BY, PF, RY>(a, *gco);
}

// One update with this shape: the tile's shared memory, z chunks for about two waves of blocks.
template <class T, int R, class Eq, bool CONST, int BY, int PF, int RY = 1, int MINB = 0>
StencilLaunchInfo launch_prefetch(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  using K = Tile<T, R, Eq::kFields, BY, PF, RY>;
  check_wraps(l, true);
  Args<T, Eq> a = make_args(l);
  // y read wrapped (StencilLaunch::xwraps asks): tiles of whole rows, so that a thread's own rows
  // are never beyond the end. The x halos are read from the grid: the updates' images
  // (StencilLaunch::images) or the fill's.
  a.ywraps = l.xwraps && a.ny % K::TY == 0 && a.ny >= R;
  auto kern = stencil_shared_kernel<T, R, Eq, CONST, BY, PF, RY, MINB>;
  set_shared_memory_once(reinterpret_cast<const void*>(kern), K::smem_bytes, false, "stencil shared kernel");
  int per_sm = 1;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * BY, K::smem_bytes));
  if (l.prepare) return {"", 0, false, true, false, a.ywraps != 0};
  const long long tx = ceil_div(a.nx, K::TX), ty = ceil_div(a.ny, K::TY);
  a.zchunk = choose_zchunk(l.tuning.z_chunk, tx * ty, a.nz, std::max(1, per_sm) * l.sm_count, R);
  const dim3 grid(unsigned(tx), unsigned(ty), z_chunks(l, a));
  kern<<<grid, dim3(32, BY), K::smem_bytes, s>>>(a, l.coeffs_global);
  std::string name = std::string("stencil_") + Eq::kKernelTag + "_shared_r" + std::to_string(R) + "_by" +
                     std::to_string(BY) + "_pf" + std::to_string(PF);
  if (RY > 1) name += "_ry" + std::to_string(RY);
  if (MINB > 0) name += "_mb" + std::to_string(MINB);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_shared_kernel", grid_text(name, a));
  // Bytes by this kernel's own model: per block, every plane of its chunk plus 2R more, each
  // with the tile, its x halo (whole 16-byte vectors) and its y-halo rows; writes once; the
  // previous level (the wave's u(t - dt)) once.
  const double tile_plane = double(K::TY) * K::TX + double(K::TY) * 2 * K::XH * K::VW + 2.0 * R * K::TX;
  const double planes = z_planes(l, a);
  const double reads = double(K::NS) * double(grid.x) * grid.y * (planes + 2.0 * R * grid.z) * tile_plane;
  const double pts = double(a.nx) * a.ny * planes;
  const double writes = pts * K::NS + (Eq::kPreviousLevel ? pts : 0);
  return {name, (reads + writes) * sizeof(T), a.images != 0 && kXImagesBuilt<T, Eq, R>, true, false, a.ywraps != 0};
}

}  // namespace
}  // namespace tiersim::cuda
