// CUDA stencil kernels: one update (heat, wave, Gray-Scott) of a 3D grid with halos of radius
// R = 1..4, in two tilings and two coefficient spaces.
//
// --tiling none: one thread per (x, y) column walking z planes; every neighbour is a read-only
//   (LDG.CONSTANT) load and L1/L2 catch the re-reads.
// --tiling shared: 2.5D blocking. A block owns a 32*VW x BY tile of an x-y plane (VW points per
//   thread as one 16-byte vector) and marches through a chunk of z planes. The z neighbours of a
//   thread's points live in a register queue (2R + PF planes, PF planes loaded ahead), so the
//   only global read per point is one 16-byte vector of the plane R + PF ahead, plus the tile's
//   halo. Each plane's tile goes to shared memory (a ring of PF + 1 buffers: one barrier per
//   plane); the halo rows and columns are copied global -> shared with cp.async PF planes ahead,
//   so they cost neither registers nor a wait at the barrier. x and y neighbours
//   are 16-byte shared loads (conflict-free: a quarter warp reads 128 consecutive bytes).
// --coeffs constant: the StencilCoeffs table in __constant__ memory: FFMA with c[0x3][...]
//   operands, a warp-uniform broadcast. --coeffs global: the same table in a global array read
//   through a const __restrict__ pointer.
// The arithmetic is kernels/physics/stencil.hpp's, the same the CPU reference runs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

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

template <class T>
struct Args {
  const T* in0;
  const T* in1;
  const T* prev;
  T* out0;
  T* out1;
  int nx, ny, nz, xlimit, zchunk;
  long long sy, sz;
  T p0, p1, p2, p3, p4;
};

constexpr int kHeat = 0, kWave = 1, kGrayScott = 2;

template <int EQ>
constexpr int stencil_fields() { return EQ == kGrayScott ? 2 : 1; }

// The point update once the Laplacians are known (shared by both tilings).
template <class T, int EQ>
__device__ __forceinline__ void update_point(const Args<T>& a, T u, T v, T lu, T lv, T up, T& o0, T& o1) {
  if constexpr (EQ == kHeat) {
    o0 = heat_update(u, lu, HeatParams<T>{a.p0});
  } else if constexpr (EQ == kWave) {
    o0 = wave_update(u, up, lu, WaveParams<T>{a.p0});
  } else {
    gray_scott_update(u, v, lu, lv, GrayScottParams<T>{a.p0, a.p1, a.p2, a.p3, a.p4}, o0, o1);
  }
}

// ---- tiling none ------------------------------------------------------------------------------
constexpr int kNoneBY = 8;

template <class T, int R, int EQ, class C>
__device__ __forceinline__ void none_body(const Args<T>& a, const C& co) {
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
    const T u = __ldg(a.in0 + o);
    const T lu = lap(a.in0);
    T v = 0, lv = 0, up = 0, o0, o1 = 0;
    if constexpr (EQ == kGrayScott) v = __ldg(a.in1 + o), lv = lap(a.in1);
    if constexpr (EQ == kWave) up = a.prev[o];
    update_point<T, EQ>(a, u, v, lu, lv, up, o0, o1);
    a.out0[o] = o0;
    if constexpr (EQ == kGrayScott) a.out1[o] = o1;
  }
}

template <class T, int R, int EQ, bool CONST>
__global__ void __launch_bounds__(32 * kNoneBY) stencil_none_kernel(Args<T> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST) none_body<T, R, EQ>(a, const_coeffs<T>());
  else none_body<T, R, EQ>(a, *gco);
}

// ---- tiling shared (2.5D) ---------------------------------------------------------------------
template <class T, int R, int EQ, int BY, int PF>
struct Tile {
  static constexpr int VW = V<T>::n;                 // points per thread (one 16-byte vector)
  static constexpr int TX = 32 * VW;                 // tile width in points
  static constexpr int XH = (R + VW - 1) / VW;       // halo vectors per side in x
  static constexpr int SW = TX + 2 * XH * VW;        // shared row width in points
  static constexpr int ROWS = BY + 2 * R;
  static constexpr int NS = stencil_fields<EQ>();
  static constexpr int Q = 2 * R + PF;               // register queue: planes z-R .. z+R+PF-1
  static constexpr int NB = PF + 1;                  // shared buffers: plane z and PF planes of halo in flight
  static constexpr std::size_t smem_bytes = std::size_t(NB) * NS * ROWS * SW * sizeof(T);
  static_assert(BY >= 2 * R, "the y-halo rows are loaded by the first 2R warps");
};

template <class T, int R, int EQ, int BY, int PF, class C>
__device__ __forceinline__ void shared_body(const Args<T>& a, const C& co) {
  using K = Tile<T, R, EQ, BY, PF>;
  constexpr int VW = K::VW, XH = K::XH, SW = K::SW, NS = K::NS, Q = K::Q, NB = K::NB;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  auto buf = [&](int b, int f) { return smem + (b * NS + f) * K::ROWS * SW; };

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx0 = blockIdx.x * K::TX, by0 = blockIdx.y * BY;
  const int x0 = bx0 + tx * VW, y = by0 + ty;
  const int z0 = blockIdx.z * a.zchunk, z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  const bool xin = x0 < a.xlimit, yin = y < a.ny + R;
  const long long off = x0 + y * sy;
  const T* in[2] = {a.in0, a.in1};

  // Halo roles. y halo: warps 0..2R-1 copy rows by0-R..by0-1 and by0+BY..by0+BY+R-1.
  const int hy_ly = ty < R ? ty - R : BY + ty - R;
  const bool hy_ok = ty < 2 * R && by0 + hy_ly < a.ny + R && xin;
  const long long hy_off = x0 + (long long)(by0 + hy_ly) * sy;
  const int hy_s = (hy_ly + R) * SW + XH * VW + tx * VW;
  // x halo: lanes 0..2XH-1 of every warp copy the XH vectors left and right of its row.
  const int hx_x = tx < XH ? bx0 - (XH - tx) * VW : bx0 + K::TX + (tx - XH) * VW;
  const bool hx_ok = tx < 2 * XH && yin && hx_x < a.xlimit;
  const long long hx_off = hx_x + y * sy;
  const int hx_s = (ty + R) * SW + (hx_x - bx0) + XH * VW;

  // Every call commits one group (empty past the chunk), so that wait_group counts planes.
  auto copy_halo = [&](int z, int b) {
    if (z >= z1) {
      cp_async_commit();
      return;
    }
    if (ty < 2 * R) {
      TIERSIM_UNROLL
      for (int f = 0; f < NS; ++f) cp_async16(buf(b, f) + hy_s, in[f] + (hy_ok ? hy_off + z * sz : 0), hy_ok);
    }
    if (tx < 2 * XH) {
      TIERSIM_UNROLL
      for (int f = 0; f < NS; ++f) cp_async16(buf(b, f) + hx_s, in[f] + (hx_ok ? hx_off + z * sz : 0), hx_ok);
    }
    cp_async_commit();
  };

  V<T> q[NS][Q];
  TIERSIM_UNROLL
  for (int i = 0; i < Q; ++i) {
    const int zz = z0 - R + i;
    const bool ok = xin && yin && zz < z1 + R;
    TIERSIM_UNROLL
    for (int f = 0; f < NS; ++f) q[f][i] = ok ? ldg16(in[f] + off + zz * sz) : zero16<T>();
  }
  // Halos of planes z0 .. z0+PF-1 in flight; the wave's u(t-dt) PF planes ahead in registers.
  TIERSIM_UNROLL
  for (int i = 0; i < PF; ++i) copy_halo(z0 + i, i);
  const bool own = y < a.ny && x0 < a.nx;
  V<T> upq[EQ == kWave ? PF : 1];
  if constexpr (EQ == kWave) {
    TIERSIM_UNROLL
    for (int i = 0; i < PF; ++i) upq[i] = own && z0 + i < z1 ? ld16(a.prev + off + (z0 + i) * sz) : zero16<T>();
  }

  int b = 0;  // buffer of plane z: (z - z0) mod NB
  for (int z = z0; z < z1; ++z) {
    // Loads for later planes first, so that they are in flight while this plane is computed.
    V<T> nq[NS];
    {
      const int zz = z + R + PF;
      const bool ok = xin && yin && zz < z1 + R;
      TIERSIM_UNROLL
      for (int f = 0; f < NS; ++f) nq[f] = ok ? ldg16(in[f] + off + zz * sz) : zero16<T>();
    }
    V<T> upv = upq[0], upn = zero16<T>();
    if constexpr (EQ == kWave)
      if (own && z + PF < z1) upn = ld16(a.prev + off + (z + PF) * sz);

    cp_async_wait_group<PF - 1>();  // this plane's halo; the PF - 1 later planes may still fly
    TIERSIM_UNROLL
    for (int f = 0; f < NS; ++f) st16(buf(b, f) + (ty + R) * SW + XH * VW + tx * VW, q[f][R]);
    __syncthreads();
    // Halo of plane z + PF into the buffer plane z - 1 used: every thread is past computing it.
    int bp = b + PF;
    if (bp >= NB) bp -= NB;
    copy_halo(z + PF, bp);

    T lap[NS][VW];
    TIERSIM_UNROLL
    for (int f = 0; f < NS; ++f) {
      const T* row = buf(b, f) + (ty + R) * SW + XH * VW + tx * VW;
      V<T> xs[2 * XH + 1];
      TIERSIM_UNROLL
      for (int h = 0; h < XH; ++h) {
        xs[h] = ld16(row - (XH - h) * VW);
        xs[XH + 1 + h] = ld16(row + (1 + h) * VW);
      }
      xs[XH] = q[f][R];
      V<T> ys[2 * R + 1];
      TIERSIM_UNROLL
      for (int k = 1; k <= R; ++k) {
        ys[R - k] = ld16(row - k * SW);
        ys[R + k] = ld16(row + k * SW);
      }
      TIERSIM_UNROLL
      for (int e = 0; e < VW; ++e) {
        lap[f][e] = laplacian<R>(co, q[f][R].e[e], [&](int axis, int d) -> T {
          if (axis == 0) {
            const int idx = XH * VW + e + d;
            return xs[idx / VW].e[idx % VW];
          }
          if (axis == 1) return ys[R + d].e[e];
          return q[f][R + d].e[e];
        });
      }
    }

    if (own) {
      V<T> o0, o1;
      TIERSIM_UNROLL
      for (int e = 0; e < VW; ++e) {
        T r1 = 0;
        update_point<T, EQ>(a, q[0][R].e[e], NS > 1 ? q[NS - 1][R].e[e] : T(0), lap[0][e], lap[NS - 1][e],
                            upv.e[e], o0.e[e], r1);
        o1.e[e] = r1;
      }
      T* p0 = a.out0 + off + z * sz;
      T* p1 = EQ == kGrayScott ? a.out1 + off + z * sz : nullptr;
      if (x0 + VW <= a.nx) {
        st16(p0, o0);
        if constexpr (EQ == kGrayScott) st16(p1, o1);
      } else {
        for (int e = 0; e < VW && x0 + e < a.nx; ++e) {
          p0[e] = o0.e[e];
          if constexpr (EQ == kGrayScott) p1[e] = o1.e[e];
        }
      }
    }

    TIERSIM_UNROLL
    for (int f = 0; f < NS; ++f) {
      TIERSIM_UNROLL
      for (int i = 0; i + 1 < Q; ++i) q[f][i] = q[f][i + 1];
      q[f][Q - 1] = nq[f];
    }
    if constexpr (EQ == kWave) {
      TIERSIM_UNROLL
      for (int i = 0; i + 1 < PF; ++i) upq[i] = upq[i + 1];
      upq[PF - 1] = upn;
    }
    if (++b == NB) b = 0;
  }
  cp_async_wait_group<0>();
}

template <class T, int R, int EQ, bool CONST, int BY, int PF>
__global__ void __launch_bounds__(32 * BY) stencil_shared_kernel(Args<T> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST) shared_body<T, R, EQ, BY, PF>(a, const_coeffs<T>());
  else shared_body<T, R, EQ, BY, PF>(a, *gco);
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

template <class T>
Args<T> make_args(const StencilLaunch<T>& l) {
  Args<T> a;
  a.in0 = l.in[0].origin;
  a.in1 = l.in[1].origin ? l.in[1].origin : l.in[0].origin;
  a.prev = l.prev ? l.prev : l.in[0].origin;
  a.out0 = l.out[0].origin;
  a.out1 = l.out[1].origin ? l.out[1].origin : l.out[0].origin;
  a.nx = l.in[0].nx, a.ny = l.in[0].ny, a.nz = l.in[0].nz;
  a.xlimit = l.xlimit;
  a.sy = l.in[0].sy, a.sz = l.in[0].sz;
  a.p0 = l.p[0], a.p1 = l.p[1], a.p2 = l.p[2], a.p3 = l.p[3], a.p4 = l.p[4];
  a.zchunk = 0;
  return a;
}

const char* eq_tag(int eq) { return eq == kHeat ? "heat" : eq == kWave ? "wave" : "gray_scott"; }

template <class T, int R, int EQ, bool CONST, int BY, int PF>
StencilLaunchInfo launch_shared(const StencilLaunch<T>& l, Args<T> a, cudaStream_t s) {
  using K = Tile<T, R, EQ, BY, PF>;
  auto kern = stencil_shared_kernel<T, R, EQ, CONST, BY, PF>;
  static bool configured = false;
  if (!configured) {
    TIERSIM_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(K::smem_bytes)),
                       "stencil shared kernel, " + std::to_string(K::smem_bytes) + " B of shared memory");
    configured = true;
  }
  int per_sm = 1;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * BY, K::smem_bytes));
  const long long tx = ceil_div(a.nx, K::TX), ty = ceil_div(a.ny, BY);
  a.zchunk = choose_zchunk(l.tuning.z_chunk, tx * ty, a.nz, std::max(1, per_sm) * l.sm_count, R);
  const dim3 grid(unsigned(tx), unsigned(ty), unsigned(ceil_div(a.nz, a.zchunk)));
  kern<<<grid, dim3(32, BY), K::smem_bytes, s>>>(a, l.coeffs_global);
  const std::string name = std::string("stencil_") + eq_tag(EQ) + "_shared_r" + std::to_string(R) + "_by" +
                           std::to_string(BY) + "_pf" + std::to_string(PF);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_shared_kernel",
                            name + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz));
  // Bytes by this kernel's own model: per block, every plane of its chunk plus 2R more, each
  // with the tile, its x halo (whole 16-byte vectors) and its y-halo rows; writes once; the
  // wave's u(t - dt) once.
  const double tile_plane = double(BY) * K::TX + double(BY) * 2 * K::XH * K::VW + 2.0 * R * K::TX;
  const double reads = double(K::NS) * double(grid.x) * grid.y * (double(a.nz) + 2.0 * R * grid.z) * tile_plane;
  const double pts = double(a.nx) * a.ny * a.nz;
  const double writes = pts * K::NS + (EQ == kWave ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

template <class T, int R, int EQ, bool CONST>
StencilLaunchInfo launch_none(const StencilLaunch<T>& l, Args<T> a, cudaStream_t s) {
  const long long tx = ceil_div(a.nx, 32), ty = ceil_div(a.ny, kNoneBY);
  int per_sm = 1;
  auto kern = stencil_none_kernel<T, R, EQ, CONST>;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * kNoneBY, 0));
  a.zchunk = l.tuning.z_chunk > 0 ? std::min(l.tuning.z_chunk, a.nz)
                                  : std::max(16, choose_zchunk(0, tx * ty, a.nz, per_sm * l.sm_count, R));
  const dim3 grid(unsigned(tx), unsigned(ty), unsigned(ceil_div(a.nz, a.zchunk)));
  kern<<<grid, dim3(32, kNoneBY), 0, s>>>(a, l.coeffs_global);
  const std::string name = std::string("stencil_") + eq_tag(EQ) + "_none_r" + std::to_string(R);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_none_kernel",
                            name + ", grid " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz));
  // Model: L1 catches the re-reads inside a block, so each block requests its footprint once:
  // its 32 x 8 columns over the chunk plus 2R planes, and the x and y halo columns over the chunk.
  const double ns = stencil_fields<EQ>();
  const double per_block = 32.0 * kNoneBY * (a.zchunk + 2.0 * R) + 2.0 * R * (kNoneBY + 32.0) * a.zchunk;
  const double reads = ns * double(grid.x) * grid.y * grid.z * per_block;
  const double pts = double(a.nx) * a.ny * a.nz;
  const double writes = pts * ns + (EQ == kWave ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

template <class T, int R, int EQ, bool CONST>
StencilLaunchInfo launch_eq(const StencilLaunch<T>& l, cudaStream_t s) {
  const Args<T> a = make_args(l);
  if (l.tiling == Tiling::None) return launch_none<T, R, EQ, CONST>(l, a, s);
  // Tile height and prefetch depth, from the sweep in docs/performance.md (H200, heat fp32,
  // 512^3): PF = 2 planes in flight beat PF = 1 by 8-10 points of copy bandwidth (the barrier
  // no longer waits on loads issued one plane earlier); PF = 4 gained nothing (more registers,
  // same issue-bound loop). 8-row tiles for R != 2, 16-row tiles for R = 2 (within noise of
  // each other elsewhere). Gray-Scott keeps 8-row tiles for its two fields; wave 16. Heat in
  // fp32 also builds the other shapes for the benchmark (--block-y, --prefetch).
  constexpr int kBY = EQ == kGrayScott ? 8 : 16;
  constexpr int kPF = 2;
  if constexpr (std::is_same_v<T, float> && EQ == kHeat) {
    const int by = l.tuning.block_y ? l.tuning.block_y : (R == 2 ? 16 : 8);
    const int pf = l.tuning.prefetch ? l.tuning.prefetch : 2;
    if (by == 8 && pf == 2) return launch_shared<T, R, EQ, CONST, 8, 2>(l, a, s);
    if (by == 8 && pf == 4) return launch_shared<T, R, EQ, CONST, 8, 4>(l, a, s);
    if (by == 16 && pf == 2) return launch_shared<T, R, EQ, CONST, 16, 2>(l, a, s);
    if (by == 16 && pf == 4) return launch_shared<T, R, EQ, CONST, 16, 4>(l, a, s);
    throw Error("stencil shared tiling: block_y must be 8 or 16 and prefetch 2 or 4");
  } else {
    return launch_shared<T, R, EQ, CONST, kBY, kPF>(l, a, s);
  }
}

template <class T, int R>
StencilLaunchInfo launch_r(const StencilLaunch<T>& l, cudaStream_t s) {
  const bool c = l.coeffs == CoeffSpace::Constant;
  switch (l.equation) {
    case Equation::Heat: return c ? launch_eq<T, R, kHeat, true>(l, s) : launch_eq<T, R, kHeat, false>(l, s);
    case Equation::Wave: return c ? launch_eq<T, R, kWave, true>(l, s) : launch_eq<T, R, kWave, false>(l, s);
    default: return c ? launch_eq<T, R, kGrayScott, true>(l, s) : launch_eq<T, R, kGrayScott, false>(l, s);
  }
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

template <class T>
StencilLaunchInfo launch_stencil_update(const StencilLaunch<T>& l, cudaStream_t s) {
  switch (l.radius) {
    case 1: return launch_r<T, 1>(l, s);
    case 2: return launch_r<T, 2>(l, s);
    case 3: return launch_r<T, 3>(l, s);
    case 4: return launch_r<T, 4>(l, s);
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
  template StencilLaunchInfo launch_stencil_update<T>(const StencilLaunch<T>&, cudaStream_t);                  \
  template void upload_constant_coeffs<T>(const StencilCoeffs<T>&, cudaStream_t);                              \
  template void launch_halo_fill<T>(const GridView<T>&, Boundary, T, cudaStream_t);                           \
  template int launch_field_stats<T>(const GridView<T>&, double*, int, cudaStream_t);                         \
  template int launch_wave_energy<T>(const GridView<T>&, const GridView<T>&, const StencilCoeffs<T>*, double, \
                                     double, double*, int, cudaStream_t);                                     \
  template void launch_add_point<T>(const GridView<T>&, int, int, int, T, cudaStream_t);
TIERSIM_STENCIL_INSTANTIATE(float)
TIERSIM_STENCIL_INSTANTIATE(double)

}  // namespace tiersim::cuda
