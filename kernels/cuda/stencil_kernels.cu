// CUDA stencil kernels: one update (heat, wave, Gray-Scott) of a 3D grid with halos of radius
// R = 1..4, in two tilings and two coefficient spaces.
//
// --tiling none: one thread per (x, y) column walking z planes; every neighbour is a read-only
//   (LDG.CONSTANT) load and L1/L2 catch the re-reads.
// --tiling shared: 2.5D blocking, two kernels. Both: a block of BY warps owns a 32*VW x BY*RY
//   tile of an x-y plane (VW points per thread and row as one 16-byte vector, RY rows per
//   thread) and marches through a chunk of z planes; the z neighbours of a thread's points live
//   in a register queue, the z loop unrolled by the queue length so that the queue rotates by
//   renaming registers; one barrier per plane; x and y neighbours are 16-byte shared loads
//   (conflict-free: a quarter warp reads 128 consecutive bytes).
//   * register prefetch (stencil_shared_kernel): the queue also holds PF planes loaded ahead
//     (LDG straight to registers, then stored to a ring of PF + 1 shared buffers); the halo
//     rows and columns go global -> shared with cp.async PF planes ahead. Default at R = 1.
//   * ring (stencil_ring_kernel): every plane of tile and halo goes global -> shared with
//     cp.async R + P planes ahead into a ring of R + P + 1 buffers; the queue holds only planes
//     z-R .. z+R, the newest read from the ring. Loads in flight cost shared memory, not
//     registers. Default at R = 2..4. At R = 4 (Hopper) each plane is one bulk tensor copy
//     (TMA) completing on an mbarrier instead of cp.async by every thread: a quarter fewer
//     instructions. From R = 2 (Hopper) the blocks run in clusters of 1 x 2 tiles along y that
//     pass a cluster barrier every plane: neighbours then read their shared halo rows within a
//     plane of each other, while the rows are in L2 (unpaced blocks drift apart over a z chunk
//     and read them twice from DRAM).
// --coeffs constant: the StencilCoeffs table in __constant__ memory: on Hopper the compiler
//   loads it once into uniform registers (ULDC from c[0x3][...]) and every FFMA takes a weight
//   from one, a warp-uniform operand. --coeffs global: the same table in a global array read
//   through a const __restrict__ pointer (loaded once per thread into ordinary registers).
// The arithmetic is kernels/physics/stencil.hpp's, the same the CPU reference runs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include <cuda.h>  // CUtensorMap and its enums (the encoder is reached through the runtime)
#include <cudaTypedefs.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_kernels.cuh"

namespace tiersim::cuda {
namespace {

__constant__ StencilCoeffs<float> c_coeffs_f;
__constant__ StencilCoeffs<double> c_coeffs_d;

template <class T>
__device__ __forceinline__ const StencilCoeffs<T>& const_coeffs();
template <>
__device__ __forceinline__ const StencilCoeffs<float>& const_coeffs<float>() { return c_coeffs_f; }
template <>
__device__ __forceinline__ const StencilCoeffs<double>& const_coeffs<double>() { return c_coeffs_d; }

// 16 bytes of T: float4 or double2.
template <class T>
struct alignas(16) V {
  static constexpr int n = 16 / sizeof(T);
  T e[n];
};

__device__ __forceinline__ V<float> ldg16(const float* p) {
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  return {{f.x, f.y, f.z, f.w}};
}
__device__ __forceinline__ V<double> ldg16(const double* p) {
  const double2 f = __ldg(reinterpret_cast<const double2*>(p));
  return {{f.x, f.y}};
}
__device__ __forceinline__ V<float> ld16(const float* p) {
  const float4 f = *reinterpret_cast<const float4*>(p);
  return {{f.x, f.y, f.z, f.w}};
}
__device__ __forceinline__ V<double> ld16(const double* p) {
  const double2 f = *reinterpret_cast<const double2*>(p);
  return {{f.x, f.y}};
}
__device__ __forceinline__ void st16(float* p, const V<float>& v) {
  *reinterpret_cast<float4*>(p) = make_float4(v.e[0], v.e[1], v.e[2], v.e[3]);
}
__device__ __forceinline__ void st16(double* p, const V<double>& v) {
  *reinterpret_cast<double2*>(p) = make_double2(v.e[0], v.e[1]);
}
template <class T>
__device__ __forceinline__ V<T> zero16() {
  V<T> v;
#pragma unroll
  for (int i = 0; i < V<T>::n; ++i) v.e[i] = T(0);
  return v;
}

// cp.async of 16 bytes global -> shared; ok == false writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool ok) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = ok ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Split cluster barrier (sm_90): arrive says "this block has started plane z", wait (one plane
// later) holds a block that runs ahead of the slowest block of its cluster. Pacing only, no data
// passes, hence relaxed. In a launch without clusters the block is its own cluster.
// Built for an older GPU (-DCMAKE_CUDA_ARCHITECTURES=80), these Hopper instructions trap; the
// drivers below never launch them there (StencilLaunch::cc_major).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TIERSIM_SM90_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TIERSIM_SM90_ASM(...) __trap()
#endif
__device__ __forceinline__ void cluster_arrive() { TIERSIM_SM90_ASM("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { TIERSIM_SM90_ASM("barrier.cluster.wait.aligned;\n" ::: "memory"); }

// Bulk tensor copy (TMA, sm_90) of one box global -> shared, completing on an mbarrier that
// counts the bytes; one thread issues it, every thread waits on the barrier's phase.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  TIERSIM_SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_init_fence() { TIERSIM_SM90_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  TIERSIM_SM90_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 1;
  do {
    TIERSIM_SM90_ASM(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int x, int y, int z, std::uint64_t* bar) {
  TIERSIM_SM90_ASM(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}

// Tensor maps of the ring kernel's TMA variant: one per input field, over the whole allocation
// (halos and row padding), x fastest; a kernel parameter (__grid_constant__), 64-byte aligned.
struct TmaMaps {
  CUtensorMap m[2];
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
  int pace;  // ring kernel in a cluster: one cluster barrier per plane keeps its blocks in step
  int gx0, gy0, gz0;  // interior point (0,0,0) in the tensor maps' coordinates (TMA variant)
  long long sy, sz;
  typename Eq::template Params<T> prm;
};

// The updates and stores of this thread's RY rows of VW points of plane z (the register-prefetch
// and ring kernels): the equation's point update from the centre values (queue slot c of q), the
// Laplacians and, with a previous level, u(t - dt) (up), then one 16-byte store per row and field
// (element stores at the grid's right edge).
template <class T, class Eq, int RY, int Q>
__device__ __forceinline__ void update_and_store(const Args<T, Eq>& a, const V<T> (&q)[Eq::kFields][RY][Q], int c,
                                                 const T (&lap)[Eq::kFields][RY][V<T>::n], const V<T> (&up)[RY],
                                                 int x0, int y0, long long off, int z) {
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
      const long long at = off + r * a.sy + z * a.sz;
      T* const dst[2] = {a.out0 + at, a.out1 + at};
      if (x0 + VW <= a.nx) {
#pragma unroll
        for (int f = 0; f < NS; ++f) st16(dst[f], o[f]);
      } else {
        for (int e = 0; e < VW && x0 + e < a.nx; ++e)
#pragma unroll
          for (int f = 0; f < NS; ++f) dst[f][e] = o[f].e[e];
      }
    }
  }
}

// ---- tiling none ------------------------------------------------------------------------------
constexpr int kNoneBY = 8;

template <class T, int R, class Eq, class C>
__device__ __forceinline__ void none_body(const Args<T, Eq>& a, const C& co) {
  constexpr int NS = Eq::kFields;
  const int x = blockIdx.x * 32 + threadIdx.x;
  const int y = blockIdx.y * kNoneBY + threadIdx.y;
  if (x >= a.nx || y >= a.ny) return;
  const int z0 = blockIdx.z * a.zchunk, z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  for (int z = z0; z < z1; ++z) {
    const long long o = x + y * sy + z * sz;
    auto lap = [&](const T* __restrict__ g) {
      return laplacian<R>(co, __ldg(g + o), [&](int axis, int d) {
        return __ldg(g + o + (axis == 0 ? (long long)d : axis == 1 ? d * sy : d * sz));
      });
    };
    const T* const in[2] = {a.in0, a.in1};
    T* const out[2] = {a.out0, a.out1};
    T u[NS], lu[NS], o_new[NS];
#pragma unroll
    for (int f = 0; f < NS; ++f) u[f] = __ldg(in[f] + o), lu[f] = lap(in[f]);
    T up = 0;
    if constexpr (Eq::kPreviousLevel) up = a.prev[o];
    Eq::update(a.prm, u, lu, up, o_new);
#pragma unroll
    for (int f = 0; f < NS; ++f) out[f][o] = o_new[f];
  }
}

template <class T, int R, class Eq, bool CONST>
__global__ void __launch_bounds__(32 * kNoneBY) stencil_none_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST) none_body<T, R, Eq>(a, const_coeffs<T>());
  else none_body<T, R, Eq>(a, *gco);
}

// ---- tiling shared (2.5D) ---------------------------------------------------------------------
// Shape: BY warps along y, each thread RY consecutive rows of VW points (one 16-byte vector per
// row), so a block owns a 32*VW x BY*RY tile; PF planes loaded ahead; MINB > 0 caps the
// registers so that MINB blocks fit on an SM (__launch_bounds__).
// (Not every kernel uses every member of Tile and Ring: nvcc's "declared but never referenced"
// is silenced for these two structs, not file-wide.)
#pragma nv_diag_suppress 177
template <class T, int R, class Eq, int BY, int PF, int RY>
struct Tile {
  static constexpr int VW = V<T>::n;                 // points per thread and row (one 16-byte vector)
  static constexpr int TX = 32 * VW;                 // tile width in points
  static constexpr int TY = BY * RY;                 // tile height in rows
  static constexpr int XH = (R + VW - 1) / VW;       // halo vectors per side in x
  static constexpr int SW = TX + 2 * XH * VW;        // shared row width in points
  static constexpr int ROWS = TY + 2 * R;
  static constexpr int NS = Eq::kFields;
  static constexpr int Q = 2 * R + PF;               // register queue: planes z-R .. z+R+PF-1
  static constexpr int NB = PF + 1;                  // shared buffers: plane z and PF planes of halo in flight
  static constexpr int HYI = (2 * R + BY - 1) / BY;  // y-halo rows per warp (2R rows over BY warps)
  static constexpr std::size_t smem_bytes = std::size_t(NB) * NS * ROWS * SW * sizeof(T);
};

// The z loop is unrolled by the queue length Q: at step s of a round the queue slot of plane
// z - R + j is (j + s) mod Q, a compile-time index, so the queue rotates by renaming registers
// instead of Q vector moves per plane; the plane loaded at step s goes into slot s, which held
// plane z - R (dead once this plane is computed).
template <class T, int R, class Eq, int BY, int PF, int RY, class C>
__device__ __forceinline__ void shared_body(const Args<T, Eq>& a, const C& co) {
  using K = Tile<T, R, Eq, BY, PF, RY>;
  constexpr int VW = K::VW, XH = K::XH, SW = K::SW, NS = K::NS, Q = K::Q, NB = K::NB, TY = K::TY;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  constexpr int kBuf = NS * K::ROWS * SW;  // one buffer: NS fields of ROWS rows

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx0 = blockIdx.x * K::TX, by0 = blockIdx.y * TY;
  const int x0 = bx0 + tx * VW, y0 = by0 + ty * RY;  // this thread's first point
  const int z0 = blockIdx.z * a.zchunk, z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  const bool xin = x0 < a.xlimit;
  const long long off = x0 + y0 * sy;
  const T* in[2] = {a.in0, a.in1};
  // Shared offset of this thread's vector in its first row (row r adds r * SW).
  const int s_own = (ty * RY + R) * SW + XH * VW + tx * VW;

  // Halo roles. y halo: the 2R rows above and below the tile, row h by warp h mod BY.
  long long hy_off[K::HYI];
  int hy_s[K::HYI];
  bool hy_ok[K::HYI];
#pragma unroll
  for (int i = 0; i < K::HYI; ++i) {
    const int h = ty + i * BY;
    const int ly = h < R ? h - R : TY + h - R;
    hy_ok[i] = h < 2 * R && by0 + ly < a.ny + R && xin;
    hy_off[i] = x0 + (long long)(by0 + ly) * sy;
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

  // q[f][r][slot]: planes z0 - R .. z0 + R + PF - 1 in slots 0 .. Q - 1.
  V<T> q[NS][RY][Q];
#pragma unroll
  for (int i = 0; i < Q; ++i) {
    const int zz = z0 - R + i;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
      for (int f = 0; f < NS; ++f) q[f][r][i] = ok ? ldg16(in[f] + off + r * sy + zz * sz) : zero16<T>();
    }
  }
  // Halos of planes z0 .. z0+PF-1 in flight; the wave's u(t-dt) PF planes ahead in registers.
#pragma unroll
  for (int i = 0; i < PF; ++i) copy_halo(z0 + i, i);
  V<T> upq[Eq::kPreviousLevel ? PF : 1][RY];
  if constexpr (Eq::kPreviousLevel) {
#pragma unroll
    for (int i = 0; i < PF; ++i)
#pragma unroll
      for (int r = 0; r < RY; ++r)
        upq[i][r] = y0 + r < a.ny && x0 < a.nx && z0 + i < z1 ? ld16(a.prev + off + r * sy + (z0 + i) * sz)
                                                               : zero16<T>();
  }

  int b = 0;  // buffer of plane z: (z - z0) mod NB
  for (int zb = z0; zb < z1; zb += Q) {
#pragma unroll
    for (int s = 0; s < Q; ++s) {
      const int z = zb + s;
      if (z >= z1) break;  // block-uniform
      const int c = (R + s) % Q;  // slot of plane z
      // Loads for later planes first, so that they are in flight while this plane is computed.
      V<T> nq[NS][RY];
      {
        const int zz = z + R + PF;
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
          for (int f = 0; f < NS; ++f) nq[f][r] = ok ? ldg16(in[f] + off + r * sy + zz * sz) : zero16<T>();
        }
      }
      V<T> upn[RY];
      if constexpr (Eq::kPreviousLevel) {
#pragma unroll
        for (int r = 0; r < RY; ++r)
          upn[r] = y0 + r < a.ny && x0 < a.nx && z + PF < z1 ? ld16(a.prev + off + r * sy + (z + PF) * sz)
                                                             : zero16<T>();
      }

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
#pragma unroll
      for (int f = 0; f < NS; ++f) {
        const T* const own = sb + f * K::ROWS * SW + s_own;
        // y neighbours outside this thread's rows: rows -R..-1 and RY..RY+R-1 (index t + R).
        V<T> ys[RY + 2 * R];
#pragma unroll
        for (int t = -R; t < RY + R; ++t)
          if (t < 0 || t >= RY) ys[t + R] = ld16(own + t * SW);
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const T* const row = own + r * SW;
          V<T> xs[2 * XH + 1];
#pragma unroll
          for (int h = 0; h < XH; ++h) {
            xs[h] = ld16(row - (XH - h) * VW);
            xs[XH + 1 + h] = ld16(row + (1 + h) * VW);
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

      update_and_store(a, q, c, lap, upq[0], x0, y0, off, z);

      // Slot s held plane z - R, dead now: it takes plane z + R + PF.
#pragma unroll
      for (int f = 0; f < NS; ++f)
#pragma unroll
        for (int r = 0; r < RY; ++r) q[f][r][s] = nq[f][r];
      if constexpr (Eq::kPreviousLevel) {
#pragma unroll
        for (int i = 0; i + 1 < PF; ++i)
#pragma unroll
          for (int r = 0; r < RY; ++r) upq[i][r] = upq[i + 1][r];
#pragma unroll
        for (int r = 0; r < RY; ++r) upq[PF - 1][r] = upn[r];
      }
      if (++b == NB) b = 0;
    }
  }
  cp_async_wait_group<0>();
}

template <class T, int R, class Eq, bool CONST, int BY, int PF, int RY, int MINB>
__global__ void __launch_bounds__(32 * BY, MINB > 0 ? MINB : 1) stencil_shared_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST) shared_body<T, R, Eq, BY, PF, RY>(a, const_coeffs<T>());
  else shared_body<T, R, Eq, BY, PF, RY>(a, *gco);
}


// Ring variant: every plane of the tile with its halos goes global -> shared by cp.async,
// D = R + P planes ahead, into a ring of D + 1 buffers, so the loads in flight cost shared
// memory instead of registers (the register-prefetch kernel above holds PF planes of loads in
// registers, which at R = 4 caps it at 16 warps and 16 KB in flight per SM). The z queue keeps
// only planes z-R .. z+R of the thread's own vectors (2R + 1 slots, unrolled by that length),
// the newest read from the ring.
//
// TMA = true: each plane (tile and halo of every field) is one bulk tensor copy issued by one
// thread and completing on the buffer's mbarrier, instead of 2-6 cp.async per thread with their
// address arithmetic; the box lands in the same layout.
template <class T, int R, class Eq, int BY, int P, int RY, bool TMA = false>
struct Ring {
  using K = Tile<T, R, Eq, BY, 1, RY>;
  static constexpr int D = R + P;                       // planes copied ahead of the current one
  static constexpr int NB = D + 1;                      // ring buffers
  static constexpr int Q = 2 * R + 1;                   // register queue
  static constexpr int NRW = (K::ROWS + BY - 1) / BY;   // rows copied per warp and plane
  // One field's plane, rounded up to 128 bytes (a bulk tensor copy's destination alignment).
  static constexpr int FS = (K::ROWS * K::SW * int(sizeof(T)) + 127) / 128 * 128 / int(sizeof(T));
  static constexpr std::size_t ring_bytes = std::size_t(NB) * K::NS * FS * sizeof(T);
  static constexpr std::size_t smem_bytes = ring_bytes + (TMA ? NB * sizeof(std::uint64_t) : 0);
  static constexpr unsigned box_bytes = unsigned(K::ROWS * K::SW * sizeof(T));
};
#pragma nv_diag_default 177

template <class T, int R, class Eq, int BY, int P, int RY, bool TMA, class C>
__device__ __forceinline__ void ring_body(const Args<T, Eq>& a, const C& co, const TmaMaps& maps) {
  using K = Tile<T, R, Eq, BY, 1, RY>;
  using G = Ring<T, R, Eq, BY, P, RY, TMA>;
  constexpr int VW = K::VW, XH = K::XH, SW = K::SW, NS = K::NS, TY = K::TY, ROWS = K::ROWS;
  constexpr int Q = G::Q, NB = G::NB, D = G::D, FS = G::FS;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  std::uint64_t* const bars = reinterpret_cast<std::uint64_t*>(smem_raw + G::ring_bytes);  // TMA: one per buffer
  constexpr int kBuf = NS * FS;

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx0 = blockIdx.x * K::TX, by0 = blockIdx.y * TY;
  const int x0 = bx0 + tx * VW, y0 = by0 + ty * RY;
  const int z0 = blockIdx.z * a.zchunk, z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  const bool xin = x0 < a.xlimit;
  const long long off = x0 + y0 * sy;
  const T* in[2] = {a.in0, a.in1};
  const int s_own = (ty * RY + R) * SW + XH * VW + tx * VW;

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
  auto copy_plane = [&](int z, int b) {
    if constexpr (TMA) {
      if (issuer && z < z1 + R) {
        mbar_expect_tx(bars + b, NS * G::box_bytes);
#pragma unroll
        for (int f = 0; f < NS; ++f)
          tma_load_3d(smem + b * kBuf + f * FS, &maps.m[f], a.gx0 + bx0 - XH * VW, a.gy0 + by0 - R, a.gz0 + z, bars + b);
      }
      return;
    }
    if (z < z1 + R) {
      const long long zo = z * sz;
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
  // from the ring at the first step.
  V<T> q[NS][RY][Q];
#pragma unroll
  for (int i = 0; i < 2 * R; ++i) {
    const int zz = z0 - R + i;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const bool ok = xin && y0 + r < a.ny + R && zz < z1 + R;
#pragma unroll
      for (int f = 0; f < NS; ++f) q[f][r][i] = ok ? ldg16(in[f] + off + r * sy + zz * sz) : zero16<T>();
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
  constexpr int UP = 2;  // the wave's u(t-dt), UP planes ahead in registers
  V<T> upq[Eq::kPreviousLevel ? UP : 1][RY];
  if constexpr (Eq::kPreviousLevel) {
#pragma unroll
    for (int i = 0; i < UP; ++i)
#pragma unroll
      for (int r = 0; r < RY; ++r)
        upq[i][r] = y0 + r < a.ny && x0 < a.nx && z0 + i < z1 ? ld16(a.prev + off + r * sy + (z0 + i) * sz)
                                                               : zero16<T>();
  }

  int b = 0;  // buffer of plane z: (z - z0) mod NB
  for (int zb = z0; zb < z1; zb += Q) {
#pragma unroll
    for (int s = 0; s < Q; ++s) {
      const int z = zb + s;
      if (z >= z1) break;  // block-uniform
      const int c = (R + s) % Q;  // slot of plane z
      V<T> upn[RY];
      if constexpr (Eq::kPreviousLevel) {
#pragma unroll
        for (int r = 0; r < RY; ++r)
          upn[r] = y0 + r < a.ny && x0 < a.nx && z + UP < z1 ? ld16(a.prev + off + r * sy + (z + UP) * sz)
                                                             : zero16<T>();
      }
      const int bn = b + R >= NB ? b + R - NB : b + R;  // buffer of plane z + R
      if (a.pace && z > z0) cluster_wait();  // every block of the cluster has started plane z - 1
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
#pragma unroll
      for (int f = 0; f < NS; ++f) {
        const T* const own = sb + f * FS + s_own;
        V<T> ys[RY + 2 * R];
#pragma unroll
        for (int t = -R; t < RY + R; ++t)
          if (t < 0 || t >= RY) ys[t + R] = ld16(own + t * SW);
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          const T* const row = own + r * SW;
          V<T> xs[2 * XH + 1];
#pragma unroll
          for (int h = 0; h < XH; ++h) {
            xs[h] = ld16(row - (XH - h) * VW);
            xs[XH + 1 + h] = ld16(row + (1 + h) * VW);
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

      update_and_store(a, q, c, lap, upq[0], x0, y0, off, z);
      if constexpr (Eq::kPreviousLevel) {
#pragma unroll
        for (int i = 0; i + 1 < UP; ++i)
#pragma unroll
          for (int r = 0; r < RY; ++r) upq[i][r] = upq[i + 1][r];
#pragma unroll
        for (int r = 0; r < RY; ++r) upq[UP - 1][r] = upn[r];
      }
      if (++b == NB) b = 0;
    }
  }
  if (a.pace) cluster_wait();  // pairs the last arrive
  if constexpr (!TMA) cp_async_wait_group<0>();
}

template <class T, int R, class Eq, bool CONST, int BY, int P, int RY, int MINB, bool TMA>
__global__ void __launch_bounds__(32 * BY, MINB > 0 ? MINB : 1)
    stencil_ring_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco, const __grid_constant__ TmaMaps maps) {
  if constexpr (CONST) ring_body<T, R, Eq, BY, P, RY, TMA>(a, const_coeffs<T>(), maps);
  else ring_body<T, R, Eq, BY, P, RY, TMA>(a, *gco, maps);
}

// ---- drivers ----------------------------------------------------------------------------------
int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// z planes per block: about two waves of blocks over the device when the grid allows, never
// fewer than 4R planes (each chunk re-reads 2R planes).
int choose_zchunk(int requested, long long tiles_xy, int nz, int slots, int R) {
  if (requested > 0) return std::min(requested, nz);
  const long long chunks = std::max<long long>(1, (2LL * slots) / std::max<long long>(1, tiles_xy));
  int zc = ceil_div(nz, chunks);
  return std::min(nz, std::max(zc, 4 * R));
}

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
  a.pace = 0;
  a.gx0 = a.gy0 = a.gz0 = 0;
  return a;
}

template <class T, int R, class Eq, bool CONST, int BY, int PF, int RY = 1, int MINB = 0>
StencilLaunchInfo launch_shared(const StencilLaunch<T, Eq>& l, Args<T, Eq> a, cudaStream_t s) {
  using K = Tile<T, R, Eq, BY, PF, RY>;
  auto kern = stencil_shared_kernel<T, R, Eq, CONST, BY, PF, RY, MINB>;
  static bool configured = false;
  if (!configured) {
    TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(K::smem_bytes)),
                       "stencil shared kernel, " + std::to_string(K::smem_bytes) + " B of shared memory");
    configured = true;
  }
  int per_sm = 1;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * BY, K::smem_bytes));
  const long long tx = ceil_div(a.nx, K::TX), ty = ceil_div(a.ny, K::TY);
  a.zchunk = choose_zchunk(l.tuning.z_chunk, tx * ty, a.nz, std::max(1, per_sm) * l.sm_count, R);
  const dim3 grid(unsigned(tx), unsigned(ty), unsigned(ceil_div(a.nz, a.zchunk)));
  kern<<<grid, dim3(32, BY), K::smem_bytes, s>>>(a, l.coeffs_global);
  std::string name = std::string("stencil_") + Eq::kKernelTag + "_shared_r" + std::to_string(R) + "_by" +
                     std::to_string(BY) + "_pf" + std::to_string(PF);
  if (RY > 1) name += "_ry" + std::to_string(RY);
  if (MINB > 0) name += "_mb" + std::to_string(MINB);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_shared_kernel",
                            name + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz));
  // Bytes by this kernel's own model: per block, every plane of its chunk plus 2R more, each
  // with the tile, its x halo (whole 16-byte vectors) and its y-halo rows; writes once; the
  // wave's u(t - dt) once.
  const double tile_plane = double(K::TY) * K::TX + double(K::TY) * 2 * K::XH * K::VW + 2.0 * R * K::TX;
  const double reads = double(K::NS) * double(grid.x) * grid.y * (double(a.nz) + 2.0 * R * grid.z) * tile_plane;
  const double pts = double(a.nx) * a.ny * a.nz;
  const double writes = pts * K::NS + (Eq::kPreviousLevel ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

// z planes per block for the ring kernel: the chunk count that minimises (waves of blocks) x
// (planes per block + the planes each block loads before its first output), so that the last
// wave is not a small fraction of the others (at 512^3 the rule above gave 1.55 waves for some
// shapes: 7 points of copy bandwidth lost).
int choose_zchunk_balanced(int requested, long long tiles_xy, int nz, int slots, int overhead) {
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

// cuTensorMapEncodeTiled from the driver, through the runtime (no link against libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    TIERSIM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q),
                       "cuTensorMapEncodeTiled");
    if (q != cudaDriverEntryPointSuccess || !f) throw Error("the driver has no cuTensorMapEncodeTiled (bulk tensor copy)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// L2 promotion of the copy engine's reads (TIERSIM_TMA_L2_PROMOTION=none|64|128|256, for the
// benchmark's sweeps): how much the L2 fetches from DRAM around each miss.
CUtensorMapL2promotion tma_l2_promotion() {
  static const CUtensorMapL2promotion p = [] {
    const char* e = std::getenv("TIERSIM_TMA_L2_PROMOTION");
    const std::string v = e ? e : "256";
    if (v == "none") return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    if (v == "64") return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    if (v == "128") return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    if (v == "256") return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    throw Error("TIERSIM_TMA_L2_PROMOTION must be none, 64, 128 or 256, not '" + v + "'");
  }();
  return p;
}

// A 3D map over the allocation of the grid whose interior starts at `origin` (x: row pitch,
// y: rows with halos, z: planes with halos); boxes of sw x rows x 1 points; outside it the copy
// engine fills zeros (where the cp.async path writes zeros too).
template <class T, class Eq>
CUtensorMap encode_grid_map(const T* origin, const Args<T, Eq>& a, int r, int sw, int rows) {
  const T* base = origin - (a.gx0 + a.gy0 * a.sy + a.gz0 * a.sz);
  const cuuint64_t dims[3] = {cuuint64_t(a.sy), cuuint64_t(a.ny + 2 * r), cuuint64_t(a.nz + 2 * r)};
  const cuuint64_t strides[2] = {cuuint64_t(a.sy) * sizeof(T), cuuint64_t(a.sz) * sizeof(T)};
  const cuuint32_t box[3] = {cuuint32_t(sw), cuuint32_t(rows), 1};
  const cuuint32_t elem[3] = {1, 1, 1};
  CUtensorMap m;
  const CUresult e = tensor_map_encoder()(
      &m, sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
      const_cast<T*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      tma_l2_promotion(), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS) throw Error("stencil: tensor map for the bulk tensor copy refused (CUresult " + std::to_string(int(e)) + ")");
  return m;
}

template <class T, int R, class Eq, bool CONST, int BY, int P, int RY, int MINB = 0, bool TMA = false>
StencilLaunchInfo launch_ring(const StencilLaunch<T, Eq>& l, Args<T, Eq> a, cudaStream_t s, int cx = 1, int cy = 1) {
  using K = Tile<T, R, Eq, BY, 1, RY>;
  using G = Ring<T, R, Eq, BY, P, RY, TMA>;
  auto kern = stencil_ring_kernel<T, R, Eq, CONST, BY, P, RY, MINB, TMA>;
  TmaMaps maps{};
  if constexpr (TMA) {
    if (l.cc_major < 9) throw Error("stencil: the bulk tensor copy kernel needs a Hopper GPU (compute capability 9.0)");
    a.gx0 = int(a.sy) - a.xlimit, a.gy0 = l.in[0].r, a.gz0 = l.in[0].r;
    for (int f = 0; f < K::NS; ++f) maps.m[f] = encode_grid_map(f ? a.in1 : a.in0, a, l.in[0].r, K::SW, K::ROWS);
  }
  static bool configured = false;
  if (!configured) {
    TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(G::smem_bytes)),
                       "stencil ring kernel, " + std::to_string(G::smem_bytes) + " B of shared memory");
    TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            int(cudaSharedmemCarveoutMaxShared)));
    configured = true;
  }
  int per_sm = 1;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * BY, G::smem_bytes));
  const long long tx = ceil_div(a.nx, K::TX), ty = ceil_div(a.ny, K::TY);
  int slots = std::max(1, per_sm) * l.sm_count;
  // Cluster of cx x cy tiles marching z in step (ring_body's pacing barrier), so that the halo
  // rows and columns one block reads are still in L2 when its neighbour reads them. Only where
  // the tiles divide evenly and the device can place such a cluster.
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
  const dim3 grid(unsigned(tx), unsigned(ty), unsigned(ceil_div(a.nz, a.zchunk)));
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
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_ring_kernel",
                            name + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz));
  // Model: per block, every plane of its chunk plus R more (the last R planes feed the queue),
  // each with the tile, its x halo and y-halo rows; the first 2R planes once more (queue
  // prologue, whole vectors); writes once; the wave's u(t - dt) once.
  const double tile_plane = double(K::TY) * K::TX + double(K::TY) * 2 * K::XH * K::VW + 2.0 * R * K::TX;
  const double blocks_xy = double(grid.x) * grid.y;
  const double reads = double(K::NS) * blocks_xy *
                       ((double(a.nz) + R * grid.z) * tile_plane + 2.0 * R * grid.z * double(K::TY) * K::TX);
  const double pts = double(a.nx) * a.ny * a.nz;
  const double writes = pts * K::NS + (Eq::kPreviousLevel ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

// Shape override for the benchmark's sweeps and the tests (heat fp32, both coefficient spaces):
// TIERSIM_STENCIL_SHAPE=K,BY,PF,RY,MINB: kernel (0: register prefetch, 1: ring, 2: ring filled by
// the bulk tensor copy), threads along
// y, planes ahead (ring: P, planes in flight past the R the queue needs), rows per thread,
// blocks per SM in __launch_bounds__ (0: none), and for the ring kernel optionally a cluster of
// CX x CY tiles paced plane by plane. Unset: the defaults in launch_eq, or --block-y/--prefetch.
struct Shape {
  int k = -1, by = 0, pf = 0, ry = 0, minb = 0, cx = 1, cy = 1;
};
Shape env_shape() {
  static const Shape sh = [] {
    Shape r;
    if (const char* e = std::getenv("TIERSIM_STENCIL_SHAPE"))
      if (const int n = std::sscanf(e, "%d,%d,%d,%d,%d,%d,%d", &r.k, &r.by, &r.pf, &r.ry, &r.minb, &r.cx, &r.cy);
          n != 5 && n != 7)
        throw Error(std::string("TIERSIM_STENCIL_SHAPE must be K,BY,PF,RY,MINB[,CX,CY], not '") + e + "'");
    return r;
  }();
  return sh;
}

template <class T, int R, class Eq, bool CONST>
StencilLaunchInfo launch_none(const StencilLaunch<T, Eq>& l, Args<T, Eq> a, cudaStream_t s) {
  const long long tx = ceil_div(a.nx, 32), ty = ceil_div(a.ny, kNoneBY);
  int per_sm = 1;
  auto kern = stencil_none_kernel<T, R, Eq, CONST>;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * kNoneBY, 0));
  a.zchunk = l.tuning.z_chunk > 0 ? std::min(l.tuning.z_chunk, a.nz)
                                  : std::max(16, choose_zchunk(0, tx * ty, a.nz, per_sm * l.sm_count, R));
  const dim3 grid(unsigned(tx), unsigned(ty), unsigned(ceil_div(a.nz, a.zchunk)));
  kern<<<grid, dim3(32, kNoneBY), 0, s>>>(a, l.coeffs_global);
  const std::string name = std::string("stencil_") + Eq::kKernelTag + "_none_r" + std::to_string(R);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_none_kernel",
                            name + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz));
  // Model: L1 catches the re-reads inside a block, so each block requests its footprint once:
  // its 32 x 8 columns over the chunk plus 2R planes, and the x and y halo columns over the chunk.
  const double ns = Eq::kFields;
  const double per_block = 32.0 * kNoneBY * (a.zchunk + 2.0 * R) + 2.0 * R * (kNoneBY + 32.0) * a.zchunk;
  const double reads = ns * double(grid.x) * grid.y * grid.z * per_block;
  const double pts = double(a.nx) * a.ny * a.nz;
  const double writes = pts * ns + (Eq::kPreviousLevel ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

template <class T, int R, class Eq, bool CONST>
StencilLaunchInfo launch_eq(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  const Args<T, Eq> a = make_args(l);
  if (l.tiling == Tiling::None) return launch_none<T, R, Eq, CONST>(l, a, s);
  // Tile shape, from the sweeps in docs/performance.md (H200, heat fp32, 512^3).
  // fp64 and Gray-Scott: 8 warps (16 would cap the registers at 128 and spill at R = 4).
  constexpr int kBY = Eq::kFields > 1 || std::is_same_v<T, double> ? 8 : 16;
  constexpr int kPF = 2;
  // One field read with halos and written, no previous level, fp32 (the heat equation's memory
  // traffic): the shapes the heat sweeps chose, below. Every other equation and fp64: the
  // register-prefetch kernel with kBY warps.
  if constexpr (std::is_same_v<T, float> && Eq::kFields == 1 && !Eq::kPreviousLevel) {
    // TIERSIM_STENCIL_SHAPE sweeps: the heat equation's.
    if constexpr (std::is_same_v<Eq, equations::Heat>) {
    const Shape e = env_shape();
    if (e.k >= 0) {
#define TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)                                        \
  if (e.k == K_ && e.by == BY_ && e.pf == PF_ && e.ry == RY_ && e.minb == MB_) {      \
    if constexpr (K_ == 0) return launch_shared<T, R, Eq, CONST, BY_, PF_, RY_, MB_>(l, a, s); \
    else return launch_ring<T, R, Eq, CONST, BY_, PF_, RY_, MB_, K_ == 2>(l, a, s, e.cx, e.cy); \
  }
      TIERSIM_SHAPE(0, 8, 2, 1, 0)
      TIERSIM_SHAPE(0, 4, 2, 2, 0)
      TIERSIM_SHAPE(1, 8, 2, 1, 0)
      TIERSIM_SHAPE(1, 8, 4, 1, 0)
      TIERSIM_SHAPE(1, 16, 2, 1, 0)
      TIERSIM_SHAPE(1, 16, 4, 1, 0)
      TIERSIM_SHAPE(1, 4, 2, 2, 0)
      TIERSIM_SHAPE(1, 4, 4, 2, 0)
      TIERSIM_SHAPE(1, 8, 4, 2, 0)
      // R = 4 only (compile time): blocks per SM, ring depth, 16 warps x 2 rows.
#define TIERSIM_SHAPE4(K_, BY_, PF_, RY_, MB_) \
  if constexpr (R == 4) TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)
      TIERSIM_SHAPE4(1, 8, 2, 2, 2)
      TIERSIM_SHAPE4(1, 8, 6, 2, 0)
      TIERSIM_SHAPE4(1, 16, 3, 2, 0)
      TIERSIM_SHAPE4(1, 16, 4, 2, 0)
      TIERSIM_SHAPE4(1, 8, 4, 3, 0)
      TIERSIM_SHAPE4(1, 8, 6, 3, 0)
      TIERSIM_SHAPE4(1, 8, 2, 4, 0)
      TIERSIM_SHAPE4(1, 8, 4, 4, 0)
      TIERSIM_SHAPE4(1, 8, 5, 4, 0)
      // Bulk tensor copy ring (K = 2): the default ring shapes of R = 2, 3, 4 and deeper/shallower rings at R = 4.
      TIERSIM_SHAPE(2, 16, 4, 1, 0)
      TIERSIM_SHAPE(2, 8, 4, 2, 0)
      TIERSIM_SHAPE4(2, 8, 4, 4, 0)
      TIERSIM_SHAPE4(2, 8, 2, 4, 0)
      TIERSIM_SHAPE4(2, 8, 1, 4, 0)
      TIERSIM_SHAPE4(2, 8, 3, 4, 0)
      TIERSIM_SHAPE4(2, 8, 4, 3, 0)
#undef TIERSIM_SHAPE4
#undef TIERSIM_SHAPE
      throw Error("TIERSIM_STENCIL_SHAPE: shape not built");
    }
    }
    // Defaults (sweeps in docs/performance.md, 512^3, constant): R = 1 the register-prefetch
    // kernel, 4 warps x 2 rows (93% of copy; the ring kernel 75-79%). R = 2 ring, 16 warps x 1
    // row, P = 4; R = 3 ring, 8 warps x 2 rows, P = 4; R = 4 ring filled by the bulk tensor copy,
    // 8 warps x 4 rows (a 128 x 32 tile), P = 2. From R = 2 in clusters of 1 x 2 tiles paced
    // plane by plane, so that the y-halo rows a block reads are still in L2 when its neighbour
    // reads them (H100: R = 2 81.7 -> 85.0%, R = 3 78.5 -> 82.2%, R = 4 76.8 -> 85.8%). Before
    // Hopper: no clusters, and R = 4 falls back to the cp.async ring.
    if (!l.tuning.block_y && !l.tuning.prefetch) {
      if constexpr (R == 1) return launch_shared<T, R, Eq, CONST, 4, 2, 2, 0>(l, a, s);
      else if constexpr (R == 2) return launch_ring<T, R, Eq, CONST, 16, 4, 1>(l, a, s, 1, 2);
      else if constexpr (R == 3) return launch_ring<T, R, Eq, CONST, 8, 4, 2>(l, a, s, 1, 2);
      else if (l.cc_major >= 9) return launch_ring<T, R, Eq, CONST, 8, 2, 4, 0, true>(l, a, s, 1, 2);
      else return launch_ring<T, R, Eq, CONST, 8, 4, 4>(l, a, s);
    }
    const int by = l.tuning.block_y ? l.tuning.block_y : 8;
    const int pf = l.tuning.prefetch ? l.tuning.prefetch : 4;
    if (by == 8 && pf == 2) return launch_ring<T, R, Eq, CONST, 8, 2, 1>(l, a, s);
    if (by == 8 && pf == 4) return launch_ring<T, R, Eq, CONST, 8, 4, 1>(l, a, s);
    if (by == 16 && pf == 2) return launch_ring<T, R, Eq, CONST, 16, 2, 1>(l, a, s);
    if (by == 16 && pf == 4) return launch_ring<T, R, Eq, CONST, 16, 4, 1>(l, a, s);
    throw Error("stencil shared tiling: block_y must be 8 or 16 and prefetch 2 or 4");
  } else {
    return launch_shared<T, R, Eq, CONST, kBY, kPF>(l, a, s);
  }
}

template <class T, class Eq, int R>
StencilLaunchInfo launch_r(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  return l.coeffs == CoeffSpace::Constant ? launch_eq<T, R, Eq, true>(l, s) : launch_eq<T, R, Eq, false>(l, s);
}

// ---- halo fill, reductions, point source ------------------------------------------------------
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

__device__ __forceinline__ void block_reduce4(double v[4], double* partials) {
  __shared__ double sh[4][kReduceThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v[0] += __shfl_down_sync(0xffffffffu, v[0], o);
    v[1] += __shfl_down_sync(0xffffffffu, v[1], o);
    v[2] = fmin(v[2], __shfl_down_sync(0xffffffffu, v[2], o));
    v[3] = fmax(v[3], __shfl_down_sync(0xffffffffu, v[3], o));
  }
  if (lane == 0)
    for (int c = 0; c < 4; ++c) sh[c][warp] = v[c];
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kReduceThreads / 32; ++w) {
      sh[0][0] += sh[0][w], sh[1][0] += sh[1][w];
      sh[2][0] = fmin(sh[2][0], sh[2][w]), sh[3][0] = fmax(sh[3][0], sh[3][w]);
    }
    for (int c = 0; c < 4; ++c) partials[blockIdx.x * 4 + c] = sh[c][0];
  }
}

template <class T>
__global__ void __launch_bounds__(kReduceThreads) field_stats_kernel(GridView<T> g, double* partials) {
  double v[4] = {0, 0, 1e308, -1e308};
  const long long n = g.interior_points();
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n; q += (long long)gridDim.x * blockDim.x) {
    const int i = int(q % g.nx), j = int((q / g.nx) % g.ny), k = int(q / ((long long)g.nx * g.ny));
    const double x = g(i, j, k);
    v[0] += x, v[1] += x * x, v[2] = fmin(v[2], x), v[3] = fmax(v[3], x);
  }
  block_reduce4(v, partials);
}

template <class T, int R>
__global__ void __launch_bounds__(kReduceThreads)
    wave_energy_kernel(GridView<T> u, GridView<T> prev, const StencilCoeffs<T>* __restrict__ co, double c2,
                       double inv_dt, double* partials) {
  double v[4] = {0, 0, 0, 0};
  const long long n = u.interior_points();
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n; q += (long long)gridDim.x * blockDim.x) {
    const int i = int(q % u.nx), j = int((q / u.nx) % u.ny), k = int(q / ((long long)u.nx * u.ny));
    const T* p = &prev(i, j, k);
    const double lp = laplacian<R>(*co, p[0], [&](int axis, int d) {
      return p[axis == 0 ? (long long)d : axis == 1 ? d * prev.sy : d * prev.sz];
    });
    const double un = u(i, j, k), vel = (un - double(p[0])) * inv_dt;
    v[0] += 0.5 * vel * vel - 0.5 * c2 * un * lp;
  }
  block_reduce4(v, partials);
}

template <class T>
__global__ void add_point_kernel(GridView<T> g, int i, int j, int k, T value) {
  g(i, j, k) += value;
}

int reduce_blocks(long long n, int max_blocks) {
  return std::max(1, std::min<int>(max_blocks, ceil_div(n, kReduceThreads)));
}

}  // namespace

template <class T, class Eq>
StencilLaunchInfo launch_stencil_update(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  switch (l.radius) {
    case 1: return launch_r<T, Eq, 1>(l, s);
    case 2: return launch_r<T, Eq, 2>(l, s);
    case 3: return launch_r<T, Eq, 3>(l, s);
    case 4: return launch_r<T, Eq, 4>(l, s);
    default: throw Error("stencil radius must be 1..4, not " + std::to_string(l.radius));
  }
}

template <class T>
void upload_constant_coeffs(const StencilCoeffs<T>& c, cudaStream_t s) {
  if constexpr (std::is_same_v<T, float>)
    TIERSIM_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_coeffs_f, &c, sizeof c, 0, cudaMemcpyHostToDevice, s));
  else
    TIERSIM_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_coeffs_d, &c, sizeof c, 0, cudaMemcpyHostToDevice, s));
}

template <class T>
void launch_halo_fill(const GridView<T>& g, Boundary bc, T value, cudaStream_t s) {
  for (int axis = 0; axis < 3; ++axis) {
    const HaloBox b0 = halo_box(axis, 0, g.nx, g.ny, g.nz, g.r), b1 = halo_box(axis, 1, g.nx, g.ny, g.nz, g.r);
    const long long n = b0.points() + b1.points();
    const int blocks = std::max(1, std::min(ceil_div(n, 256), 65535));
    halo_fill_kernel<T><<<blocks, 256, 0, s>>>(g, axis, b0, b1, bc, value);
    TIERSIM_CUDA_CHECK_LAUNCH("halo_fill_kernel", "axis " + std::to_string(axis) + ", " + std::to_string(n) + " points");
  }
}

template <class T>
int launch_field_stats(const GridView<T>& g, double* partials, int max_blocks, cudaStream_t s) {
  const int blocks = reduce_blocks(g.interior_points(), max_blocks);
  field_stats_kernel<T><<<blocks, kReduceThreads, 0, s>>>(g, partials);
  TIERSIM_CUDA_CHECK_LAUNCH("field_stats_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
int launch_wave_energy(const GridView<T>& u, const GridView<T>& prev, const StencilCoeffs<T>* co, double c2,
                       double inv_dt, double* partials, int max_blocks, cudaStream_t s) {
  const int blocks = reduce_blocks(u.interior_points(), max_blocks);
  switch (u.r) {
    case 1: wave_energy_kernel<T, 1><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials); break;
    case 2: wave_energy_kernel<T, 2><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials); break;
    case 3: wave_energy_kernel<T, 3><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials); break;
    default: wave_energy_kernel<T, 4><<<blocks, kReduceThreads, 0, s>>>(u, prev, co, c2, inv_dt, partials); break;
  }
  TIERSIM_CUDA_CHECK_LAUNCH("wave_energy_kernel", std::to_string(blocks) + " blocks");
  return blocks;
}

template <class T>
void launch_add_point(const GridView<T>& g, int i, int j, int k, T value, cudaStream_t s) {
  add_point_kernel<T><<<1, 1, 0, s>>>(g, i, j, k, value);
  TIERSIM_CUDA_CHECK_LAUNCH("add_point_kernel", "source point");
}

#define TIERSIM_STENCIL_INSTANTIATE(T)                                                                          \
  template void upload_constant_coeffs<T>(const StencilCoeffs<T>&, cudaStream_t);                              \
  template void launch_halo_fill<T>(const GridView<T>&, Boundary, T, cudaStream_t);                           \
  template int launch_field_stats<T>(const GridView<T>&, double*, int, cudaStream_t);                         \
  template int launch_wave_energy<T>(const GridView<T>&, const GridView<T>&, const StencilCoeffs<T>*, double, \
                                     double, double*, int, cudaStream_t);                                     \
  template void launch_add_point<T>(const GridView<T>&, int, int, int, T, cudaStream_t);
TIERSIM_STENCIL_INSTANTIATE(float)
TIERSIM_STENCIL_INSTANTIATE(double)

// The update of every listed equation in both precisions, for stencil_cuda.cu to call: this
// function is externally visible, so it is emitted, and with it every update whose address it takes.
template <class... Eqs>
auto update_entry_points(EquationList<Eqs...>) {
  return std::make_tuple(&launch_stencil_update<float, Eqs>..., &launch_stencil_update<double, Eqs>...);
}
auto stencil_update_entry_points() { return update_entry_points(StencilEquations{}); }

}  // namespace tiersim::cuda
