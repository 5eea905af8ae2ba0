// Temporal blocking of the stencil steps: one pass through HBM advances the fields by T time
// steps (heat, wave, Gray-Scott; R = 1..4; fp32, fp64; periodic or fixed boundaries), the time
// levels in between kept on chip. 2.5D streaming with overlapped tiles, as AN5D (CGO 2020) and
// EBISU (ICS 2023) do it.
//
// The pass. A block holds a region of W0 x H0 points of every x-y plane (W0 = one warp of 16-byte
// vectors: 128 fp32 / 64 fp64 points; H0 = BY warps x RY rows per thread) and marches along z.
// Its output tile is the region less a halo of T R rows in y and xh = T R (rounded up to whole
// vectors, so every load and store stays 16-byte aligned) points in x: (W0 - 2 xh) x (H0 - 2 T R).
// At step i input plane i (level 0) has arrived; level t = 1..T then computes its plane i - t R,
// which needs level t - 1 at planes i - t R - R .. i - t R + R, all on chip by then; level T goes
// to global memory. Level t is valid on the region less t R per side, so it is computed only by
// the warps whose rows meet rows t R .. H0 - t R (the levels shrink towards the output tile), and
// the x halo lanes compute values no output depends on. Where the data lives:
//  - level 0: a ring of 2R + 1 + D planes in shared memory, filled by cp.async D planes ahead of
//    use (each thread copies its own vectors, so only its own cp.async.wait_group guards its z
//    window; the centre plane that others read as y neighbours arrived R steps earlier);
//  - levels 1..T-1: a register queue of 2R + 1 planes per level (each thread its own column: RY
//    rows of one vector), rotated by unrolling the z loop 2R + 1 deep so that slots are
//    compile-time indices (as the register-prefetch kernels' queues, stencil_prefetch.cuh);
//  - y neighbours: level 0 from the ring, level t - 1's centre plane through exchange planes in
//    shared memory (fp32 at R = 1, heat at R = 3: a ring of R + 1 per level, each plane stored
//    when computed and read R steps later, so the step's one barrier serves every level; else two,
//    alternating, stored just before use, one barrier per level: Geo::XR); x neighbours: warp
//    shuffles from the lanes beside (a warp holds whole rows of the region);
//  - the wave's second time level: u(t - dt) (only its centre: level 1 needs it at plane i - R)
//    comes through a small ring of its own, and level t >= 2 takes level t - 2 from the queue (or
//    the ring) below, so u(t) and u(t - dt) of every level are on chip; the pass writes u(t + T dt)
//    and u(t + (T - 1) dt), the pair the next step needs.
// One barrier per plane (before level 1) with the exchange rings, else T. T is a run-time value
// up to the kernel's TMAX (a final partial pass uses the same kernel).
//
// Boundaries. No halo is read and none written. Periodic: every index is taken modulo n, so the
// tiles at the edges read the wrapped rows, columns and planes themselves (x: whole vectors where
// nx is a multiple of the vector, else element by element where a vector straddles the edge). Fixed: a point outside
// the interior holds the boundary value at every time level, as the single-step engine's halo does: level 0 is set to
// it on load, and every later level sets it again after the update. Neighbours' planes (TemporalOptions::z_below,
// z_above: a rank's slab with T R planes of each neighbour's beside it, or a z range of a larger grid) are read as
// interior points: the levels in them are computed as the neighbour computes them, so the slab's planes come out as
// those of the whole grid. A kernel holds a body for each kind of boundary, compiled with it as a
// constant (kBoundaryBodies: the fp32 wave at R = 1 one body testing it at run time).
//
// Bit-identical to the single-step kernels (stencil_families.cuh): the arithmetic is
// kernels/physics/stencil.hpp's laplacian<R> and the equation's point update (its traits type in
// kernels/physics/equations/) on the same neighbour values in the same order, so heat and wave
// match bit for bit, periodic and fixed, fp32 and fp64 (the tests require it). Gray-Scott is the
// same order too, but u v^2 is used twice and where the compiler fuses the multiply-adds around
// it is its choice per kernel: expected bit for bit, tested against a relative bound (1e-5 fp32,
// 1e-12 fp64).
//
// What bounds it (H100/H200: 132 SMs, ~1.75 GHz under load; per SM and clock 128 B of shared
// memory (one 128-byte wavefront), 4 warp instructions, 64 fp64 FMA). Per warp and level a
// thread updates RY rows x VW points. Wavefronts per warp and plane: level 1 (from the ring)
// 4 (RY + 2R + 2R RY) for the centre rows, y rows and z window, 2R RY shuffles (x, 4-byte lanes;
// fp64 twice); each later level 4 (RY + 2R) for the exchange store and the y rows, 2R RY shuffles;
// the ring fill 4 RY. Issue: the Laplacian is 1 + 6R floating-point instructions per point
// (FMUL, then an FADD and an FFMA per neighbour pair), the update 1-3, and the loads, shuffles,
// selects and loop 2-4 more. Per point update, fp32, default shapes:
//   R = 1, RY = 2, T = 4: 0.10 clk of shared memory (9.8 updates/clk/SM), ~11 instructions (11.6);
//   R = 2, RY = 2, T = 3: 0.18 clk (5.6 updates/clk), ~18 instructions (7.1);
//   R = 4, RY = 4, T = 2: 0.30 clk (3.4 updates/clk), ~31 instructions (4.1);
//   fp64 R = 1, T = 4: 0.23 clk (4.3 updates/clk), 8 fp64 operations (8 at 64 FMA/clk).
// Redundant work at 512^3 (updates per useful point-step): y, the levels on rows t R .. H0 - t R
// at warp granularity (R = 1, 24-row region: (24 + 20 + 20 + 16) / (4 x 16) = 1.25; R = 2, T = 3:
// 48 / 36 = 1.33; R = 4, 32 rows: 40 / 32 = 1.25); x, a warp computes all 128 columns for 120 or
// 112 outputs and 512 columns take 4 such tiles and the 32 or 64 points left (the one
// power-of-two loss): 5 full tiles would compute 640 / 512 = 1.25x; where the remainder and its
// halo take at most 16 vectors (T R <= 4 in fp32: 10), the last column's tiles hold bands, 3
// regions of 10 vectors side by side in a warp, and cost 0.3 of a column (4.3 / 4.27 = 1.01;
// fp64, 9 tiles of 56 and 8 left: 4 bands of 8 vectors); at T R = 5..8 (5 tiles of 112, 64
// left: 20 vectors) it stays 1.25; z, each segment a block streams (its planes of one tile) reads
// 2 T R planes more than it outputs (6% in chunks of 103 planes at R = 1, T = 3). So ~1.35
// (R = 1), ~1.4 (R = 2), ~1.65 (R = 4).
// Against the targets (the single-step kernels at 512^3 on an H100: 0.414, 0.457 and 0.455 ms
// per step at R = 1, 2, 4; fp64 R = 1 about 0.86): 1.6x at R = 1 needs 2.2 useful point-steps per
// clock and SM, 3.6 updates: 37% of the shared-memory bound, 31% of issue; 1.4x at R = 2 needs
// 3.0 updates (54%, 42%); fp64 1.4x at R = 1 needs 1.5 (35%, 19% of the fp64 pipe); 1.25x at R = 4
// needs 2.6 updates: 75% of the shared-memory bound, and the R = 4 kernels spill (below), so R = 4
// is expected near or under 1x; the 512-wide x quantization alone costs it 20%. DRAM is no longer
// the bound: a pass reads each field once (its halo rows once more, mostly from L2) and writes it
// once for T steps, i.e. 2 / T of a step's bytes per step.
// Register capacity is what caps T and the region: the queues hold (T - 1)(2R + 1) RY vectors per
// thread (R = 1, T = 4, RY = 2: 72 registers; R = 4, T = 2, RY = 4: 144), and level 1's loads
// another 4 (RY + 2R + 2R RY) registers, against 65536 per SM for one block of BY warps. Shared
// memory holds the ring, the exchange planes and the wave's ring: (2R + 1 + D + NNB + NBP) planes
// of H0 (+ 2R padding rows, Geo::YP) x 512 B; at R = 4 one region of 32 rows takes 208-220 KB, so
// one block per SM.
//
// Shapes (BY x RY, D; -Xptxas -v, sm_90, CUDA 13.0; fp32 heat / wave unless noted; XR: exchange
// rings; spills: bytes stored):
//   R = 1, TMAX 3: 16 x 2, D 2 (default in fp32, XR; 144 / 192 KB): 123 / 123 registers, no spills;
//          TMAX 4: 12 x 2, D 2 (for T = 4; XR; 132 / 168 KB): 151 / 151, no spills;
//                  8 x 4, D 2 (XR; 176 / 224 KB): 246 / 255, no spills; 16 x 2 (heat, XR): 128, 28 B
//                  spilled;
//   R = 2, TMAX 2: 16 x 2, D 2 (default; heat XR; 160 / 176 KB): 128 / 128, no spills;
//          TMAX 3: 12 x 2, D 2 (for T = 3; heat XR; 156 / 144 KB): 168 / 167, no spills;
//                  8 x 4, D 2 (heat XR; 208 / 192 KB): 255 / 255, no spills / 8 B of stack;
//   R = 3, TMAX 2: 12 x 2, D 2 (heat XR; padded, 195 / 195 KB): 163 / 160, no spills;
//   R = 4, TMAX 2: 8 x 4, D 1 (default; padded 220 / unpadded 208 KB): 255, 136 / 316 B spilled;
//                  12 x 2, D 1 (padded, 176 / 208 KB): 168, 404 / 128 B spilled;
//   fp64 (the same bytes per vector, no XR; padded): R = 1 16 x 2 of 3 (default for heat) 123 /
//   128, 8 x 4 (default for the wave) 255 / 255, 12 x 2 (91 / 130 KB) 152 / 160, no spills;
//   R = 2 16 x 2 128, R = 2 12 x 2 and R = 3 168, no spills; R = 4 8 x 4 255, 1,032 / 488 B
//   spilled;
//   Gray-Scott R = 1, TMAX 2: 8 x 2, D 2 (96 KB; fp64 padded, 108 KB): fp32 153, fp64 177, no spills.
// Each level's rows are computed straight into their slot of the queue (the plane 2R + 1 below,
// which no level reads any more), so a level holds no second copy of its results. R = 4 still
// does not fit: level 1's z window and y rows (4 (2R + 1 + 2R) registers per row) beside a 9-plane
// queue exceed the register file for any region tall enough to keep an output (2 T R = 16 rows of
// halo). What would: the queue only for the rows level 2 reads in z (rows 2R .. H0 - 2R), the
// outer rows of level 1 passed on through a shared delay ring of R + 1 planes.
//
// How many steps (temporal_default_steps): T = 4 at R = 1, 2 at R = 2..4 and for Gray-Scott
// (two fields: twice the queues), clamped by the default shape's TMAX (3 for fp32 and heat fp64 at
// R = 1: the 16-warp shape fusing 3 steps beat 12 warps fusing 4, H200, heat 0.2427 against 0.2593
// ms per step, the wave 0.2929 against 0.3229, and 8 x 4 fusing 4 in heat fp64 by 13%; at R = 2
// 16 warps fusing 2 beat 12, heat 0.3664 against 0.4515, in fp64 0.7683 against 0.9241; the wave
// in fp32 at R = 1 where the L2 is under 56 MB asks for 4 and so runs 12 x 2,
// temporal_default_steps), lowered to 2 where the whole state fits in half the device's L2 (the
// single-step kernels then run from L2 and the redundant work weighs more), and while less than a
// quarter of the region would be output.
// Why these: the queue registers grow as (T - 1)(2R + 1), the output share of a 24-row region as
// 1 - 2 T R / 24 (R = 1: 0.67 at T = 4, 0.58 at T = 5; R = 2: 0.5 at T = 3, 0.33 at T = 4), while
// the DRAM bytes per step fall as 2 / T: past these T the redundant work and the queues cost more
// than the bytes saved (measured, 512^3 on an H200: R = 1 T = 2, 3, 4 0.286, 0.290, 0.278 ms per
// step; R = 2 T = 2, 3 0.452, 0.502 ms; 12 x 2 shapes). The shape: the first that fits the device's
// shared memory per block and fuses the steps asked for; how the blocks share the tiles and
// planes: choose_split, from the SM count and the occupancy.
// base/hd.hpp gives nvcc's host pass GCC's "#pragma GCC unroll", which nvcc's front end does not
// know (warning 1675, from kernels/physics/stencil.hpp; stencil_cuda.cu shows it too): not ours.
#pragma nv_diag_suppress 1675

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/env.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/kernel_setup.hpp"
#include "kernels/cuda/stencil_device.cuh"
#include "kernels/cuda/stencil_temporal.cuh"
#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"

namespace tiersim::cuda {
namespace {

constexpr int kHeat = 0, kWave = 1, kGrayScott = 2;
// The passes built to walk shares of the work (TemporalOptions::blocks; stencil_temporal_kernel):
// heat at R = 1, where they pay (launch_stencil_temporal). Only those kernels carry the walk's
// loop: around the others' bodies it cost 3-6% (512^3 on an H100, ms a step, without / with it:
// the wave fp32 R = 1 0.2898 / 0.2985, heat R = 2 0.3474 / 0.3684, the wave R = 2 0.4718 / 0.4860).
constexpr bool walks_shares(int eq, int R) { return eq == kHeat && R == 1; }
// The traits type of an equation index, and its parameters in TemporalParams.
template <int EQ>
using EqOf = std::conditional_t<EQ == kHeat, equations::Heat,
                                std::conditional_t<EQ == kWave, equations::Wave, equations::GrayScott>>;
template <int EQ, class T>
__host__ __device__ const auto& params_of(const TemporalParams<T>& p) {
  if constexpr (EQ == kHeat)
    return p.heat;
  else if constexpr (EQ == kWave)
    return p.wave;
  else
    return p.gray_scott;
}

// ---- beyond kernels/cuda/stencil_device.cuh (V, ld16, st16, cp.async groups) -------------------
// cp.async of 16 bytes without the zero-fill operand, the 4- and 8-byte (.ca) form, and splat16.
template <class T>
__device__ __forceinline__ V<T> splat16(T x) {
  V<T> v;
#pragma unroll
  for (int i = 0; i < V<T>::n; ++i) v.e[i] = x;
  return v;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared, bypassing L1 (.cg); both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(smem)), "l"(gmem) : "memory");
}
// One scalar (4 or 8 bytes) global -> shared (.ca: the only form for sizes below 16).
template <int N>
__device__ __forceinline__ void cp_async_elem(void* smem, const void* gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_u32(smem)), "l"(gmem), "n"(N) : "memory");
}

__device__ __forceinline__ int wrap(int i, int n) {
  const int m = i % n;
  return m < 0 ? m + n : m;
}

// ---- the kernel ---------------------------------------------------------------------------------
// The boundaries' bodies of a kernel (temporal_segment's BC). One body for each kind of boundary
// everywhere but the fp32 wave at R = 1, which keeps one body testing a.fixed at run time: with two,
// its periodic pass ran 6% slower (512^3 on an H200, a pass of 3 steps 0.698 -> 0.741 ms), while
// the other passes measured took from 0.2% more to 7.1% less time periodic and 5.4-14.1% less fixed
// (docs/performance.md, "Each kind of boundary a body of its own").
constexpr int kPeriodicBody = 0, kFixedBody = 1, kEitherBody = 2;
template <class T, int R, int EQ>
constexpr bool kBoundaryBodies = !(std::is_same_v<T, float> && EQ == kWave && R == 1);

template <class T>
struct TArgs {
  const T* in[2];  // heat {u}; wave {u(t), u(t - dt)}; gray-scott {U, V}: interior point (0,0,0)
  T* out[2];       // heat {u}; wave {u(t + T dt), u(t + (T-1) dt)}; gray-scott {U, V}
  int nx, ny, nz;
  long long sy, sz;
  int steps;        // T, the time levels this pass advances (1..TMAX)
  int xh;           // x halo of the region: T R rounded up to whole 16-byte vectors
  int wout, hout;   // output tile: W0 - 2 xh points by H0 - 2 T R rows
  int zchunk;       // output planes per block (blocks == 0: a grid of tiles x z chunks)
  int blocks;       // > 0: a 1-D grid of this many blocks, each walking an equal share of the work
  int tiles_x;      // output tiles along x (columns), the last one banded where bands > 1
  int tiles_y;      // output tiles along y in the full-width columns
  int bands;        // > 1: the last column's tiles hold this many regions (bands) side by side
  int band_vecs;    // 16-byte vectors across a band (bands > 1)
  long long units;  // the pass's work: tiles x nz output planes, tile-major (blocks > 0)
  int fixed;        // Boundary::Fixed: points outside the interior hold bv at every level
  int zlo, zhi;     // planes -zlo..-1 and nz..nz+zhi-1 hold the neighbours' values (TemporalOptions)
  T bv[2];
  TemporalParams<T> prm;  // the pass's equation's member is read
  StencilCoeffs<T> co;
};

// Column bx and row by of output tile `tile`: the full-width columns' tiles row by row, then the
// last column's (banded where a.bands > 1: row by holds bands by * bands .. of hout rows each).
template <class T>
__host__ __device__ inline void tile_at(const TArgs<T>& a, long long tile, int& bx, int& by) {
  const int full_cols = a.bands > 1 ? a.tiles_x - 1 : a.tiles_x;
  const long long full = (long long)full_cols * a.tiles_y;
  if (tile < full) {
    bx = int(tile % full_cols), by = int(tile / full_cols);
  } else {
    bx = a.tiles_x - 1, by = int(tile - full);
  }
}
// Whether column bx's tiles are banded, how many regions (bands) a tile of it holds, and the first
// output row of band `band` of tile row by: the kernel and the host's cost model place them alike.
template <class T>
__host__ __device__ inline bool banded_column(const TArgs<T>& a, int bx) {
  return a.bands > 1 && bx == a.tiles_x - 1;
}
template <class T>
__host__ __device__ inline int tile_bands(const TArgs<T>& a, int bx) {
  return banded_column(a, bx) ? a.bands : 1;
}
template <class T>
__host__ __device__ inline int band_row0(const TArgs<T>& a, int bx, int by, int band) {
  return (by * tile_bands(a, bx) + band) * a.hout;
}

template <class T, int R, int EQ, int TMAX, int BY, int RY, int D>
struct Geo {
  static constexpr int VW = V<T>::n;                   // points per 16-byte vector
  static constexpr int W0 = 32 * VW;                   // region width: one warp, one vector per lane
  static constexpr int H0 = BY * RY;                   // region height
  static constexpr int Q = 2 * R + 1;                  // z window of one level (register queue length)
  static constexpr int NF = EQ == kGrayScott ? 2 : 1;  // fields with neighbours
  static constexpr int NB0 = 2 * R + 1 + D;            // input ring: the z window and D planes in flight
  static constexpr int NBP = EQ == kWave ? D + 1 : 0;  // the wave's u(t - dt): own column, D planes ahead
  // Exchange planes of levels 1..T-1 (their y neighbours). XR: a ring of R + 1 per level, each
  // level's plane stored the step it is computed and read R steps later, when the level above
  // reaches it, so that the step's one barrier (before level 1) orders every write and read; else
  // two, alternating, stored just before use and a barrier per level. Where the ring pays, measured
  // on an H100 at 512^3 (ms per step, ring against two planes): fp32 heat R = 1 0.260 / 0.279,
  // R = 3 0.636 / 0.683, the wave R = 1 0.324 / 0.342; heat at R = 2 (the last column banded)
  // 0.2946 / 0.3008, fusing 3 0.4171 / 0.4445 (H200 0.2938 / 0.3003, 0.4167 / 0.4440). It lost in
  // fp64 at R = 1 (heat 0.608 / 0.587, the wave 0.703 / 0.675) and for the wave at R = 2 on the
  // H100 (0.4902 / 0.4763, its pass bound by DRAM there; 0.3905 / 0.4094 on the H200), and is even
  // for Gray-Scott. Only where it fits in shared memory.
  static constexpr bool XR = std::is_same_v<T, float> && EQ != kGrayScott && (R == 1 || (R <= 3 && EQ == kHeat)) &&
                             (std::size_t(NB0 + (TMAX - 1) * (R + 1)) * NF + NBP) * W0 * H0 * sizeof(T) <= 227 * 1024;
  static constexpr int NNB = XR ? (TMAX - 1) * (R + 1) : TMAX >= 3 ? 2 : TMAX == 2 ? 1 : 0;
  static constexpr int NQ = TMAX > 1 ? TMAX - 1 : 1;  // register queues: levels 1..TMAX-1
  static constexpr int NPL = (NB0 + NNB) * NF + NBP;  // planes in shared memory
  // R rows of padding above and below every plane: the y neighbours of the region's first and
  // last rows (garbage there, read only for points no output depends on) are then at a fixed
  // offset from a thread's own rows, as every other row's, instead of behind a clamp to the region
  // computed at every level. Where it measured faster (512^3, H200, ms per step, padded against
  // clamped): fp64 (heat R = 1, 2, 4 0.484 / 0.497, 0.684 / 0.713, 3.28 / 3.41) and from R = 3
  // (heat fp32 R = 4 1.73 / 1.83, the wave R = 3 1.26 / 1.33, in fp64 1.77 / 2.07); in fp32 at
  // R <= 2 it was mixed (heat R = 1 0.213 / 0.210, the wave R = 2 0.472 / 0.456), so there the
  // clamp stays. Only where it fits (not the wave at R = 4 in 8 x 4: 260 KB).
  static constexpr bool kPad = !std::is_same_v<T, float> || R >= 3;
  static constexpr int YP = kPad && std::size_t(NPL) * W0 * (H0 + 2 * R) * sizeof(T) <= 227 * 1024 ? R : 0;
  static constexpr int PL = W0 * (H0 + 2 * YP);  // one field's plane in shared memory (elements)
  static constexpr std::size_t smem_bytes = std::size_t(NPL) * PL * sizeof(T);
};

// One level's update of a thread's RY x VW points: C the centre plane (own rows), YS the rows
// beyond them (y neighbours), Z(f, r, d) the own column at z offset d, UP(r) the wave's level below.
// (A function, not a generic lambda in the kernel: cudafe++ 13.0 crashes on those.)
template <class T, int R, int EQ, int NF, int RY, class ZF, class UF>
__device__ __forceinline__ void level_update(const TArgs<T>& a, const V<T> (&C)[NF][RY], const V<T> (&YS)[NF][2 * R],
                                             const ZF& Z, const UF& UP, V<T> (&res)[NF][RY]) {
  constexpr int VW = V<T>::n;
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    // x neighbours beyond the vector, positions -R..-1 and VW..VW+R-1, from the lanes beside (the
    // region's first and last lanes get garbage: the x halo, never an output's dependency).
    T XS[NF][2 * R];
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int pl = j - R, dl = (-pl + VW - 1) / VW, el = pl + dl * VW;
        XS[f][j] = __shfl_up_sync(0xffffffffu, C[f][r].e[el], dl);
        const int pr = VW + j, dr = pr / VW, er = pr % VW;
        XS[f][R + j] = __shfl_down_sync(0xffffffffu, C[f][r].e[er], dr);
      }
    T lap[NF][VW];
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int e = 0; e < VW; ++e)
        lap[f][e] = laplacian<R>(a.co, C[f][r].e[e], [&](int axis, int d) -> T {
          if (axis == 0) {
            const int x = e + d;
            return x < 0 ? XS[f][x + R] : x >= VW ? XS[f][x - VW + R] : C[f][r].e[x];
          }
          if (axis == 1) {
            const int y = r + d;
            return y < 0 ? YS[f][y + R].e[e] : y >= RY ? YS[f][y - RY + R].e[e] : C[f][y].e[e];
          }
          return Z(f, r, d).e[e];
        });
    // The equation's point update (kernels/physics/equations/), as the single-step kernels call it.
    using Eq = EqOf<EQ>;
    const auto& prm = params_of<EQ>(a.prm);
    const V<T> up = UP(r);  // the wave's u(t - dt); unused otherwise
#pragma unroll
    for (int e = 0; e < VW; ++e) {
      T u[NF], l[NF], o[NF];
#pragma unroll
      for (int f = 0; f < NF; ++f) u[f] = C[f][r].e[e], l[f] = lap[f][e];
      Eq::template update<T>(prm, u, l, up.e[e], o);
#pragma unroll
      for (int f = 0; f < NF; ++f) res[f][r].e[e] = o[f];
    }
  }
}

// One block's pass over output tile `tile` (tile_at), output planes zo0 .. zo1 - 1: input planes
// zo0 - T R .. zo1 + T R - 1 stream through, the first 2 T R of them filling the pipeline of levels.
// BC: the boundaries, kPeriodicBody or kFixedBody (compile-time constants, so that the periodic
// body holds none of the fixed boundaries' tests and the fixed body none of the wrapping), or
// kEitherBody (a.fixed tested at run time; kBoundaryBodies says where).
template <class T, int R, int EQ, int TMAX, int BY, int RY, int D, int BC>
__device__ __forceinline__ void temporal_segment(const TArgs<T>& a, const long long tile, const int zo0,
                                                 const int zo1) {
  using G = Geo<T, R, EQ, TMAX, BY, RY, D>;
  constexpr int VW = G::VW, W0 = G::W0, H0 = G::H0, Q = G::Q, NF = G::NF, NB0 = G::NB0, PL = G::PL, NQ = G::NQ;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const ring = reinterpret_cast<T*>(smem_raw);  // [NB0][NF][H0][W0]: level 0, planes i-2R .. i+D
  T* const xbuf = ring + NB0 * NF * PL;            // [NNB][NF][H0][W0]: centre planes of levels 1..T-1 (Geo::XR)
  T* const pring = xbuf + G::NNB * NF * PL;        // [NBP][H0][W0]: the wave's u(t - dt), own column

  const int lane = threadIdx.x, r0 = threadIdx.y * RY;  // this thread: lane's vector, rows r0 .. r0+RY-1
  const int steps = a.steps, TR = steps * R;
  int bx, by;
  tile_at(a, tile, bx, by);
  // A banded tile (the last column, a.bands > 1): lanes band * bw .. hold band `band`, a region
  // of bw vectors across whose output rows follow the previous band's; the lanes past the last
  // band, and bands past the grid, load and store nothing. A band's first and last lanes are its
  // x halo, so the shuffles across a band's edge bring what no output depends on, as at the
  // region's edges. Else one region of the warp's 32 vectors.
  const int bw = banded_column(a, bx) ? a.band_vecs : 32;  // vectors across this thread's region
  const int band = lane / bw, xv = lane - band * bw;
  const int ox0 = bx * a.wout, oy0 = band_row0(a, bx, by, band);  // output tile origin
  const bool live = band < tile_bands(a, bx) && oy0 < a.ny;
  const int gx = ox0 - a.xh + xv * VW;             // global x of this lane's vector (region x0 = ox0 - xh)
  const int gy0 = oy0 - TR + r0;                   // global y of row r0 (region y0 = oy0 - T R)
  const int i0 = zo0 - TR, iend = zo1 + TR;        // input planes this block reads
  const int sown = (G::YP + r0) * W0 + lane * VW;  // shared offset of this thread's first vector
  const bool fixed = BC == kEitherBody ? a.fixed != 0 : BC == kFixedBody;

  // Where this thread's vectors come from. Loads only inside the region the output depends on
  // (partial tiles at the far edges skip the rest); x: one 16-byte copy where the vector lies in
  // the interior, or wraps whole (periodic, nx a multiple of VW: gx is, so its image is a whole
  // vector too), the boundary value where it lies wholly outside (fixed), else element by element.
  const bool xneed = live && gx < min(ox0 + a.wout, a.nx) + a.xh;
  const bool xvec = (gx >= 0 && gx + VW <= a.nx) || (!fixed && a.nx % VW == 0);
  const int gxs = xvec && !fixed ? wrap(gx, a.nx) : gx;  // the vector's column in memory
  unsigned xin = 0;                                      // bit e: element e is an interior point (periodic: always)
#pragma unroll
  for (int e = 0; e < VW; ++e) xin |= unsigned(!fixed || (gx + e >= 0 && gx + e < a.nx)) << e;
  // Row offset of element e of a vector that is not wholly inside (periodic: wrapped); computed
  // where used, the edge lanes' slow path, instead of held in registers through the z loop.
  auto xoff = [&](int e) { return fixed ? gx + e : wrap(gx + e, a.nx); };
  const int yneed1 = min(oy0 + a.hout, a.ny) + TR;
  // Offset in a plane of the vector read for row r: its row wrapped (periodic) or itself (fixed, if
  // interior), at column gxs; held through the z loop, so that a plane's copies add only its offset.
  int rowoff[RY];
  unsigned yload = 0, yin = 0, yprev = 0;  // bit r: row r is loaded / interior / reads u(t - dt)
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int gy = gy0 + r;
    const bool in = !fixed || (gy >= 0 && gy < a.ny);
    const bool ld = xneed && gy < yneed1;
    yload |= unsigned(ld) << r;
    yin |= unsigned(in) << r;
    yprev |= unsigned(ld && r0 + r >= R && r0 + r < H0 - R) << r;
    rowoff[r] = (fixed ? (in ? gy : 0) : wrap(gy, a.ny)) * int(a.sy) + gxs;
  }
  const unsigned xall = (1u << VW) - 1;
  const bool lean = !fixed && xvec;  // every copy of this thread one 16-byte vector
  // Output: rows T R .. H0 - T R - 1 of the region, lanes xh .. W0 - xh - 1, interior only (bit r:
  // row r), the vector whole or element by element where it straddles the far edge (owhole).
  const bool olane = live && xv * VW >= a.xh && xv * VW < bw * VW - a.xh && gx < a.nx;
  unsigned omask = 0;
#pragma unroll
  for (int r = 0; r < RY; ++r) omask |= unsigned(olane && r0 + r >= TR && r0 + r < H0 - TR && gy0 + r < a.ny) << r;
  const bool owhole = gx + VW <= a.nx;
  // The plane the pass's last level computes at step i, i - T R: whichever level is the last, its
  // output address is the same expression, computed once a step.
  int kout = i0 - TR;
  // Levels a warp computes (bit t): its rows meet rows t R .. H0 - t R of the region.
  unsigned wact = 0;
#pragma unroll
  for (int t = 1; t <= TMAX; ++t) wact |= unsigned(r0 + RY > t * R && r0 < H0 - t * R) << t;

  // One vector of a field at plane z, row r of this thread, into shared memory (cp.async; the
  // boundary value where the point is outside the interior; pz: the field's plane z, zin: plane z
  // is interior (fixed)).
  auto copy_vec = [&](T* dst, const T* pz, bool zin, int r, T bv) {
    const T* const src = pz + rowoff[r];
    if (lean) {  // periodic, whole vectors: one copy, no tests
      cp_async16(dst, src);
      return;
    }
    if (!zin || !((yin >> r) & 1u)) {
      st16(dst, splat16(bv));
      return;
    }
    if (xvec) {
      cp_async16(dst, src);
    } else if (xin == 0) {
      st16(dst, splat16(bv));
    } else {
#pragma unroll
      for (int e = 0; e < VW; ++e)
        if ((xin >> e) & 1u)
          cp_async_elem<int(sizeof(T))>(dst + e, src - gxs + xoff(e));
        else
          dst[e] = bv;
    }
  };
  // Level 0 of plane cz into ring slot `slot`, and the wave's u(t - dt) of plane cz - R (which
  // level 1 reads at the step that reads plane cz) into slot `pslot` of its own ring: one
  // cp.async group per call (empty past the end), so that wait_group counts planes.
  int cz = i0;
  auto copy_plane = [&](int slot, int pslot) {
    if (cz < iend) {
      const bool zmem = cz >= -a.zlo && cz < a.nz + a.zhi;  // in memory: the interior or a neighbour's plane
      const bool zin = zmem || !fixed;
      const long long zo = (long long)(zmem || fixed ? cz : wrap(cz, a.nz)) * a.sz;
#pragma unroll
      for (int f = 0; f < NF; ++f) {
        const T* const pz = a.in[f] + zo;
#pragma unroll
        for (int r = 0; r < RY; ++r)
          if ((yload >> r) & 1u) copy_vec(ring + (slot * NF + f) * PL + sown + r * W0, pz, zin, r, a.bv[f]);
      }
      if constexpr (EQ == kWave) {
        const int zp = cz - R;
        const bool pmem = zp >= -a.zlo && zp < a.nz + a.zhi;
        const bool pin = pmem || !fixed;
        const T* const pz = a.in[1] + (long long)(pmem || fixed ? zp : wrap(zp, a.nz)) * a.sz;
#pragma unroll
        for (int r = 0; r < RY; ++r)
          if ((yprev >> r) & 1u) copy_vec(pring + pslot * PL + sown + r * W0, pz, pin, r, a.bv[1]);
      }
    }
    cp_async_commit();
    ++cz;
  };

  auto warp_active = [&](int t) { return (wact >> t) & 1u; };
  // Shared offset of region row `row` at this lane (rows outside the region: the padding rows, or
  // clamped where there are none; garbage, read only for points no output depends on).
  auto yrow = [&](int row) { return (G::YP ? row + G::YP : min(max(row, 0), H0 - 1)) * W0 + lane * VW; };

  // Fixed boundaries: points outside the interior hold the boundary value at every level (a
  // level's rows at plane k, tested once for all rows: periodic runs skip it).
  auto fix_rows = [&](V<T>(&res)[NF][RY], int k) {
    const bool zin = k >= -a.zlo && k < a.nz + a.zhi;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const bool in = zin && ((yin >> r) & 1u);
      if (in && xin == xall) continue;
#pragma unroll
      for (int e = 0; e < VW; ++e)
        if (!(in && ((xin >> e) & 1u)))
#pragma unroll
          for (int f = 0; f < NF; ++f) res[f][r].e[e] = a.bv[f];
    }
  };
  // The last level of the pass: its interior points of the output tile to global memory; the
  // wave's second output is the level below (c1: its centre plane).
  auto output_row = [&](const V<T>(&res)[NF][RY], const V<T>& c1, int r) {
    if (!((omask >> r) & 1u)) return;
    const long long o = (long long)kout * a.sz + ((gy0 + r) * int(a.sy) + gx);
    const V<T>& v = res[0][r];
    const V<T>& o1 = EQ == kWave ? c1 : res[NF - 1][r];
    if (owhole) {
      st16(a.out[0] + o, v);
      if constexpr (EQ != kHeat) st16(a.out[1] + o, o1);
    } else {
      for (int e = 0; e < VW && gx + e < a.nx; ++e) {
        a.out[0][o + e] = v.e[e];
        if constexpr (EQ != kHeat) a.out[1][o + e] = o1.e[e];
      }
    }
  };
  // A level's rows once computed (in place: its queue slot, or the last level's own registers):
  // fixed boundaries applied; the last level's to global memory (C: the level below, the wave's
  // second output).
  auto finish = [&](V<T>(&res)[NF][RY], const V<T>(&C)[NF][RY], int k, bool last) {
    if (fixed) fix_rows(res, k);
    if (last)
#pragma unroll
      for (int r = 0; r < RY; ++r) output_row(res, C[0][r], r);
  };

  // q[L-1][slot][f][r]: level L (1..TMAX-1) of plane p in slot (p + L R - i0) mod Q, so that at
  // step s of an unrolled round every level's newest plane goes to slot s (the one its plane
  // 2R + 1 below held), and the slots of a level's z window are compile-time indices.
  V<T> q[NQ][Q][NF][RY];
#pragma unroll
  for (int l = 0; l < NQ; ++l)
#pragma unroll
    for (int j = 0; j < Q; ++j)
#pragma unroll
      for (int f = 0; f < NF; ++f)
#pragma unroll
        for (int r = 0; r < RY; ++r) q[l][j][f][r] = splat16(T(0));

#pragma unroll
  for (int d = 0; d < D; ++d) copy_plane(d, d);
  int sl = 0;                                                              // ring slot of plane i: (i - i0) mod NB0
  int psl = 0;                                                             // the wave's: (i - i0) mod (D + 1)
  auto rslot = [&](int j) { return sl - j < 0 ? sl - j + NB0 : sl - j; };  // slot of plane i - j
  int xs = 0;  // Geo::XR: exchange slot of the planes computed at step i, (i - i0) mod (R + 1)
  // Exchange plane of level l (1..T-1) in slot x; only the rows others read as y neighbours are
  // stored: R at each end of a thread's rows.
  auto xplane = [&](int l, int x) { return xbuf + ((l - 1) * (R + 1) + x) * NF * PL; };
  auto store_edges = [&](T* xb, const V<T>(&v)[NF][RY]) {
#pragma unroll
    for (int f = 0; f < NF; ++f)
#pragma unroll
      for (int r = 0; r < RY; ++r)
        if (r < R || r >= RY - R) st16(xb + f * PL + sown + r * W0, v[f][r]);
  };

  for (int ib = i0; ib < iend; ib += Q) {
#pragma unroll
    for (int s = 0; s < Q; ++s) {
      const int i = ib + s;
      if (i >= iend) break;          // block-uniform
      cp_async_wait_group<D - 1>();  // this thread's copies of plane i have landed
      // Everyone's copies of plane i - R have landed (waited R steps ago); the slot of plane
      // i - 2R - 1 is free (last read at the previous step).
      __syncthreads();
      copy_plane(sl + D >= NB0 ? sl + D - NB0 : sl + D, psl == 0 ? D : psl - 1);

      // Level 1 at plane i - R, from the ring: centre rows, y neighbours and the own column's z
      // window are shared loads.
      if (i >= i0 + 2 * R && warp_active(1)) {
        const int sc = rslot(R);
        V<T> C[NF][RY], YS[NF][2 * R];
#pragma unroll
        for (int f = 0; f < NF; ++f) {
          const T* const b = ring + (sc * NF + f) * PL;
#pragma unroll
          for (int r = 0; r < RY; ++r) C[f][r] = ld16(b + sown + r * W0);
#pragma unroll
          for (int j = 0; j < R; ++j) {
            YS[f][j] = ld16(b + yrow(r0 - R + j));
            YS[f][R + j] = ld16(b + yrow(r0 + RY + j));
          }
        }
        auto Z = [&](int f, int r, int d) { return ld16(ring + (rslot(R - d) * NF + f) * PL + sown + r * W0); };
        auto UP = [&](int r) { return ld16(pring + psl * PL + sown + r * W0); };
        // Straight into its queue slot (the slot's plane, 2R + 1 below, is no longer read).
        level_update<T, R, EQ, NF, RY>(a, C, YS, Z, UP, q[0][s]);
        finish(q[0][s], C, i - R, steps == 1);
        if constexpr (G::XR)
          if (steps > 1) store_edges(xplane(1, xs), q[0][s]);
      }

      // Levels 2..T at planes i - t R, from the register queues; the centre plane of level t - 1
      // comes through shared memory for the y neighbours (x: shuffles): with Geo::XR from the
      // exchange ring, stored R steps ago; else stored now into exchange plane t & 1, behind a
      // barrier (a barrier always lies between a plane's readers and its next writer).
#pragma unroll
      for (int t = 2; t <= TMAX; ++t) {
        if (t > steps) break;            // block-uniform
        const int L = t - 2;             // queue of level t - 1
        const int cs = (s - R + Q) % Q;  // its centre slot: plane i - t R
        T* xb;
        if constexpr (G::XR) {
          xb = xplane(t - 1, xs == R ? 0 : xs + 1);  // the slot of step i - R
        } else {
          xb = xbuf + ((t & 1) && G::NNB > 1 ? 1 : 0) * NF * PL;
          if (warp_active(t - 1)) store_edges(xb, q[L][cs]);
          __syncthreads();
        }
        if (i >= i0 + 2 * t * R && warp_active(t)) {
          V<T> YS[NF][2 * R];
#pragma unroll
          for (int f = 0; f < NF; ++f)
#pragma unroll
            for (int j = 0; j < R; ++j) {
              YS[f][j] = ld16(xb + f * PL + yrow(r0 - R + j));
              YS[f][R + j] = ld16(xb + f * PL + yrow(r0 + RY + j));
            }
          auto Z = [&](int f, int r, int d) -> const V<T>& { return q[L][(s + d - R + 2 * Q) % Q][f][r]; };
          // The wave's level t - 2 at plane i - t R: the ring's plane i - 2R (t = 2), else the
          // oldest slot of queue t - 2.
          auto UP = [&](int r) -> V<T> {
            if (t == 2) return ld16(ring + rslot(2 * R) * NF * PL + sown + r * W0);
            return q[t >= 3 ? t - 3 : 0][(s + 1) % Q][0][r];
          };
          if (t < TMAX) {  // straight into the queue slot of level t, as level 1
            V<T>(&res)[NF][RY] = q[t - 1 < NQ ? t - 1 : NQ - 1][s];
            level_update<T, R, EQ, NF, RY>(a, q[L][cs], YS, Z, UP, res);
            const bool last = t == steps;
            finish(res, q[L][cs], i - t * R, last);
            if constexpr (G::XR)
              if (!last) store_edges(xplane(t, xs), res);
          } else {  // the kernel's last level: no queue
            V<T> res[NF][RY];
            level_update<T, R, EQ, NF, RY>(a, q[L][cs], YS, Z, UP, res);
            finish(res, q[L][cs], i - t * R, true);
          }
        }
      }
      if (++sl == NB0) sl = 0;
      ++kout;
      if (G::XR && ++xs == R + 1) xs = 0;
      if (EQ == kWave && ++psl == D + 1) psl = 0;
    }
  }
  cp_async_wait_group<0>();
}

// A block's work. The kernels that walk shares (walks_shares): [w0, w1) of the tile-major (tile,
// output plane) units, in segments of one tile each; blocks > 0 (one block per SM slot): an
// equal share each, so that every SM ends together and a block pays the 2 T R planes of pipeline
// filling once per tile it touches (at 512^3, heat fp64 R = 1: 736 plane-steps a block against 786
// for two z chunks of 256 planes in three waves of 132, the last one 80% full; where it is
// chosen: choose_split). Else, and in the other kernels, a grid of tiles (x) by z
// chunks of a.zchunk (y).
template <class T, int R, int EQ, int TMAX, int BY, int RY, int D>
__global__ void __launch_bounds__(32 * BY, 1) stencil_temporal_kernel(const __grid_constant__ TArgs<T> a) {
  auto segment = [&](long long tile, int z0, int z1) {
    if constexpr (!kBoundaryBodies<T, R, EQ>)
      temporal_segment<T, R, EQ, TMAX, BY, RY, D, kEitherBody>(a, tile, z0, z1);
    else if (a.fixed)
      temporal_segment<T, R, EQ, TMAX, BY, RY, D, kFixedBody>(a, tile, z0, z1);
    else
      temporal_segment<T, R, EQ, TMAX, BY, RY, D, kPeriodicBody>(a, tile, z0, z1);
  };
  if constexpr (!walks_shares(EQ, R)) {
    const int zo0 = blockIdx.y * a.zchunk;
    segment(blockIdx.x, zo0, min(zo0 + a.zchunk, a.nz));
  } else {
    long long w0, w1;
    if (a.blocks > 0) {
      w0 = blockIdx.x * a.units / a.blocks;
      w1 = (blockIdx.x + 1LL) * a.units / a.blocks;
    } else {
      w0 = blockIdx.x * (long long)a.nz + (long long)blockIdx.y * a.zchunk;
      w1 = blockIdx.x * (long long)a.nz + min((long long)a.nz, (blockIdx.y + 1LL) * a.zchunk);
    }
    for (bool first = true; w0 < w1; first = false) {
      const long long tile = w0 / a.nz;
      const int z0 = int(w0 - tile * a.nz), z1 = int(min((long long)a.nz, z0 + (w1 - w0)));
      if (!first) __syncthreads();  // every warp is done with the previous tile's shared memory
      segment(tile, z0, z1);
      w0 += z1 - z0;
    }
  }
}

// ---- drivers ------------------------------------------------------------------------------------
int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }
// -1: no temporal kernel for the equation.
int eq_index(Equation e) {
  return e == Equation::Heat ? kHeat : e == Equation::Wave ? kWave : e == Equation::GrayScott ? kGrayScott : -1;
}
const char* eq_tag(int eq) { return eq == kHeat ? "heat" : eq == kWave ? "wave" : "gray_scott"; }

template <class T>
struct Entry {
  TemporalShape shape;
  const void* kernel;
  void (*launch)(const TArgs<T>&, dim3, cudaStream_t);
};

template <class T, int R, int EQ, int TMAX, int BY, int RY, int D>
void add(std::vector<Entry<T>>& v) {
  using G = Geo<T, R, EQ, TMAX, BY, RY, D>;
  static_assert(G::smem_bytes <= 227 * 1024, "a shape must fit Hopper's 227 KB of shared memory per block");
  Entry<T> e;
  e.shape.block_y = BY, e.shape.rows_per_thread = RY, e.shape.planes_ahead = D, e.shape.max_steps = TMAX;
  e.shape.width = G::W0, e.shape.height = G::H0, e.shape.smem_bytes = G::smem_bytes;
  e.kernel = reinterpret_cast<const void*>(&stencil_temporal_kernel<T, R, EQ, TMAX, BY, RY, D>);
  e.launch = [](const TArgs<T>& a, dim3 g, cudaStream_t s) {
    stencil_temporal_kernel<T, R, EQ, TMAX, BY, RY, D><<<g, dim3(32, BY), G::smem_bytes, s>>>(a);
  };
  v.push_back(e);
}

// The instantiated shapes (BY warps x RY rows per thread, D planes ahead, TMAX), the default
// first; the others for the sweeps (TIERSIM_TEMPORAL_SHAPE, the benchmark). Registers and spills
// of each: the file header. Second shapes only where a sweep is wanted (R = 1, 2; fp32 at R = 4):
// every kernel here is unrolled 2R + 1 planes x TMAX levels deep, and compile time adds up.
template <class T, int EQ>
void build_entries(std::vector<Entry<T>>& v, int R) {
  constexpr bool f32 = std::is_same_v<T, float>;
  if constexpr (EQ == kGrayScott) {
    if (R == 1) add<T, 1, EQ, 2, 8, 2, 2>(v);
    return;
  } else {
    switch (R) {
      case 1: {
        // fp32 and heat fp64: 16 x 2 fusing at most 3 steps (123 registers, 16 warps per SM) before
        // 12 x 2 of 4; the fp64 wave: 8 x 4 fusing 4 first. 512^3, ms a step on an H100: heat fp64
        // 16 x 2 of 3 0.4142, 8 x 4 of 4 0.4782, 12 x 2 of 4 0.4839; the fp64 wave 0.6087, 0.6011,
        // 0.6060 (docs/performance.md, "Temporal blocking").
        constexpr bool k16First = f32 || EQ == kHeat;
        if constexpr (k16First) add<T, 1, EQ, 3, 16, 2, 2>(v);
        if constexpr (!f32) add<T, 1, EQ, 4, 8, 4, 2>(v);
        add<T, 1, EQ, 4, 12, 2, 2>(v);
        if constexpr (f32) add<T, 1, EQ, 4, 8, 4, 2>(v);
        if constexpr (f32 && EQ == kHeat) add<T, 1, EQ, 4, 16, 2, 2>(v);
        if constexpr (!k16First) add<T, 1, EQ, 3, 16, 2, 2>(v);
        break;
      }
      case 2:
        // 16 x 2 fusing at most 2 steps (128 registers, 16 warps per SM) before 12 x 2 of 3.
        add<T, 2, EQ, 2, 16, 2, 2>(v);
        add<T, 2, EQ, 3, 12, 2, 2>(v);
        if constexpr (f32) add<T, 2, EQ, 3, 8, 4, 2>(v);
        break;
      case 3:
        add<T, 3, EQ, 2, 12, 2, 2>(v);
        break;
      case 4:
        add<T, 4, EQ, 2, 8, 4, 1>(v);
        if constexpr (f32) add<T, 4, EQ, 2, 12, 2, 1>(v);
        break;
      default:
        break;
    }
  }
}

template <class T>
const std::vector<Entry<T>>& entries(int eq, int R) {
  static std::once_flag once;
  static std::vector<Entry<T>> tab[3][kMaxRadius + 1];
  std::call_once(once, [] {
    for (int r = 1; r <= kMaxRadius; ++r) {
      build_entries<T, kHeat>(tab[kHeat][r], r);
      build_entries<T, kWave>(tab[kWave][r], r);
      build_entries<T, kGrayScott>(tab[kGrayScott][r], r);
    }
  });
  static const std::vector<Entry<T>> none;
  return eq >= 0 && R >= 1 && R <= kMaxRadius ? tab[eq][R] : none;
}

std::string shape_text(const TemporalShape& s) {
  return std::to_string(s.block_y) + "," + std::to_string(s.rows_per_thread) + "," + std::to_string(s.planes_ahead);
}

// The shape a launch uses: opt.shape, else TIERSIM_TEMPORAL_SHAPE=BY,RY,P, else the first that fits
// the device's shared memory per block.
template <class T>
int pick_shape(const std::vector<Entry<T>>& v, int eq, int R, const TemporalOptions& opt, std::size_t smem_optin) {
  const std::string what = std::string("temporal ") + eq_tag(eq) + " R=" + std::to_string(R) +
                           (std::is_same_v<T, float> ? " fp32" : " fp64");
  if (v.empty()) throw Error(what + ": no temporally blocked kernel (Gray-Scott: R = 1 only)");
  std::string built;
  for (const Entry<T>& e : v) {
    if (!built.empty()) built += ' ';
    built += shape_text(e.shape);
  }
  auto fits = [&](int i) {
    if (smem_optin && v[i].shape.smem_bytes > smem_optin)
      throw Error(what + ": shape " + shape_text(v[i].shape) + " needs " + std::to_string(v[i].shape.smem_bytes) +
                  " B of shared memory per block, the device allows " + std::to_string(smem_optin));
    return i;
  };
  // The first shape `accept` takes that fuses the steps asked for, else the first it takes; -1: none.
  auto first = [&](auto accept) {
    int any = -1;
    for (int i = 0; i < int(v.size()); ++i)
      if (accept(v[i].shape)) {
        if (v[i].shape.max_steps >= opt.steps) return i;
        if (any < 0) any = i;
      }
    return any;
  };
  if (opt.shape >= 0) {
    if (opt.shape >= int(v.size()))
      throw Error(what + ": shape index " + std::to_string(opt.shape) + " not built (shapes BY,RY,P: " + built + ")");
    return fits(opt.shape);
  }
  if (const char* e = std::getenv(env::kTemporalShape); e && *e) {
    int by = 0, ry = 0, pa = 0;
    if (std::sscanf(e, "%d,%d,%d", &by, &ry, &pa) != 3)
      throw Error(std::string("TIERSIM_TEMPORAL_SHAPE must be BY,RY,P, not '") + e + "'");
    const int match = first(
        [&](const TemporalShape& sh) { return sh.block_y == by && sh.rows_per_thread == ry && sh.planes_ahead == pa; });
    if (match >= 0) return fits(match);
    throw Error(what + ": TIERSIM_TEMPORAL_SHAPE=" + e + " not built (shapes BY,RY,P: " + built + ")");
  }
  // The first that fits the device (where none fuses the steps asked for, the pass refuses them).
  const int i = first([&](const TemporalShape& sh) { return !smem_optin || sh.smem_bytes <= smem_optin; });
  return fits(i >= 0 ? i : 0);  // none fits: throws with the sizes
}

// x halo of a pass of T steps: T R rounded up to whole 16-byte vectors (the region's loads and
// the output tile stay 16-byte aligned).
int x_halo(int T, int R, int vw) { return (T * R + vw - 1) / vw * vw; }

// The default fused step count (see "How many steps" in the file header).
int default_steps(int eq, int R, const TemporalShape& sh, int vw, std::size_t state_bytes, std::size_t l2_bytes) {
  int T = eq == kGrayScott || R > 1 ? 2 : 4;
  T = std::min(T, sh.max_steps);
  // A state that fits in half the L2 is read from L2 by the single-step kernels too: there the
  // pass saves L2, not DRAM, traffic and the redundant halo work weighs more.
  if (l2_bytes && state_bytes * 2 <= l2_bytes) T = std::min(T, 2);
  // Keep at least a quarter of the region as output.
  while (T > 1 && 4LL * (sh.height - 2 * T * R) * (sh.width - 2 * x_halo(T, R, vw)) < 1LL * sh.height * sh.width) --T;
  return T;
}

// How the blocks share a pass: blocks > 0, that many each walking an equal share of the
// tile-major (tile, output plane) units; else z chunks of zchunk planes per tile, one block each.
struct Split {
  int zchunk = 0;
  long long blocks = 0;
};

// f(block, tile, planes) for every segment (a block's planes of one tile) of the split, in the
// order stencil_temporal_kernel walks them; blocks numbered as the kernel's grid, x fastest.
template <class F>
void for_each_segment(const Split& sp, long long tiles, int nz, F&& f) {
  const long long units = tiles * nz;
  auto walk = [&](long long block, long long w0, long long w1) {
    while (w0 < w1) {
      const long long tile = w0 / nz, planes = std::min(w1, (tile + 1) * nz) - w0;
      f(block, tile, planes);
      w0 += planes;
    }
  };
  if (sp.blocks > 0) {
    for (long long b = 0; b < sp.blocks; ++b) walk(b, b * units / sp.blocks, (b + 1) * units / sp.blocks);
  } else {
    const long long chunks = ceil_div(nz, sp.zchunk);
    for (long long c = 0; c < chunks; ++c)
      for (long long tile = 0; tile < tiles; ++tile)
        walk(c * tiles + tile, tile * nz + c * sp.zchunk, tile * nz + std::min<long long>(nz, (c + 1) * sp.zchunk));
  }
}

// The split with the shortest time, in plane-steps of the block that ends last (each segment
// streams its planes plus `overhead` = 2 T R): z chunks in waves of `slots` blocks (the chunk
// count that minimises waves x (chunk + overhead), as the ring kernel's launch chooses,
// stencil_ring.cuh), or, where `shares` allows, one block per slot walking an equal share, whose
// segments straddle tiles but whose blocks all end together; the share only where it is 5%
// shorter. opt.z_chunk or opt.blocks asks for one.
Split choose_split(const TemporalOptions& opt, long long tiles, int nz, long long slots, int overhead, bool shares) {
  Split chunked;
  if (opt.blocks > 0) return Split{nz, std::min<long long>(opt.blocks, tiles * nz)};
  if (opt.z_chunk > 0) return Split{std::min(opt.z_chunk, nz), 0};
  slots = std::max(1LL, slots);
  chunked.zchunk = nz;
  double best_cost = 1e300;
  for (int c = 1; c <= nz; ++c) {
    const int zc = ceil_div(nz, c);
    if (c > 1 && zc == ceil_div(nz, c - 1)) continue;
    const double waves = double((tiles * ceil_div(nz, zc) + slots - 1) / slots);
    const double cost = waves * (zc + overhead);
    if (cost < best_cost * 0.999) best_cost = cost, chunked.zchunk = zc;
  }
  if (!shares) return chunked;
  const Split shared{nz, std::min(slots, tiles * nz)};
  std::vector<long long> planes(std::size_t(shared.blocks), 0);  // each block's, pipeline filling included
  for_each_segment(shared, tiles, nz, [&](long long b, long long, long long n) { planes[b] += n + overhead; });
  // Shares lose the L2's reuse of the halo rows that neighbouring tiles at the same planes share
  // (DRAM reads ~1.5x), so they must save more than that costs: 5%. At 512^3 on an H100, heat R = 1
  // (banded last column), ms a step, shares / chunks: fp32 0.1944 / 0.1737 (modelled 347 / 354
  // plane-steps: 0.98), fp64 0.3812 / 0.3909 (732 / 786: 0.93).
  return double(*std::max_element(planes.begin(), planes.end())) < best_cost * 0.95 ? shared : chunked;
}

}  // namespace

template <class T>
void prepare_stencil_temporal(Equation eq, int R, const TemporalOptions& opt) {
  const int e = eq_index(eq);
  const std::vector<Entry<T>>& v = entries<T>(e, R);
  const std::string what = std::string("temporal ") + eq_tag(e) + " R=" + std::to_string(R);
  const Entry<T>& en = v[pick_shape(v, e, R, opt, query_device().smem_optin_per_block)];
  set_shared_memory_once(en.kernel, en.shape.smem_bytes, true, what.c_str());
}
template void prepare_stencil_temporal<float>(Equation, int, const TemporalOptions&);
template void prepare_stencil_temporal<double>(Equation, int, const TemporalOptions&);

std::vector<TemporalShape> temporal_shapes(Equation eq, int R, bool fp64) {
  std::vector<TemporalShape> s;
  if (fp64)
    for (const auto& e : entries<double>(eq_index(eq), R)) s.push_back(e.shape);
  else
    for (const auto& e : entries<float>(eq_index(eq), R)) s.push_back(e.shape);
  return s;
}

int temporal_max_steps(Equation eq, int R, bool fp64) {
  int most = 0;
  for (const TemporalShape& sh : temporal_shapes(eq, R, fp64)) most = std::max(most, sh.max_steps);
  return most;
}

int temporal_default_steps(Equation eq, int R, bool fp64, int nx, int ny, int nz, const TemporalOptions& opt) {
  const DeviceInfo d = query_device();
  const int e = eq_index(eq);
  if (temporal_shapes(eq, R, fp64).empty())
    throw Error("--tiling temporal: no temporally blocked kernel for this equation at R = " + std::to_string(R));
  const std::size_t scalar = fp64 ? 8 : 4;
  TemporalOptions o = opt;
  // The wave in fp32 at R = 1 where the memory is not deep (deep_memory, kernels/device_info.hpp:
  // the H100's 50 MB of L2 against the H200's 60): the first shape fusing 4 steps (12 x 2)
  // ran 0.2845 ms a step against 0.3437 for the first shape's 3 (16 x 2), while on the H200 16 x 2
  // stays ahead, 0.2748 against 0.2831 (512^3, commit 013d1d5; docs/performance.md).
  if (e == kWave && !fp64 && R == 1 && d.l2_bytes && !deep_memory(d.l2_bytes) && o.steps < 4) o.steps = 4;
  const TemporalShape sh =
      fp64 ? entries<double>(e, R)[pick_shape(entries<double>(e, R), e, R, o, d.smem_optin_per_block)].shape
           : entries<float>(e, R)[pick_shape(entries<float>(e, R), e, R, o, d.smem_optin_per_block)].shape;
  const std::size_t state = std::size_t(stencil_field_count(eq)) * std::size_t(nx) * ny * nz * scalar;
  return default_steps(e, R, sh, int(16 / scalar), state, d.l2_bytes);
}

namespace {
// The pass's speedup over the whole single step (the update, and its halo fill where it has one),
// measured at 512^3 on an NVIDIA H100 80GB HBM3 with the kernels of commit 0ef64a2 (`tiersim bench
// stencil --tilings shared,temporal`, T = 2 from R = 2; docs/performance.md, "Temporal blocking").
// fixed_share: the share of it fixed boundaries keep (the speedup of `tiersim run` with
// grid.boundary = "fixed" over that of a periodic run, each from the median pass and single step
// in telemetry.csv), measured on an NVIDIA H200 with the kernels of commit fbd6595, and on the H100
// at 0ef64a2 for the wave fp32 and heat fp64 at R = 2, which fuse there and not on the H200; 0: not
// measured, where neither device fuses by default.
struct MeasuredGain {
  int eq, R, fp64;
  double speedup, fixed_share;
};
constexpr MeasuredGain kMeasuredGains[] = {
    {kHeat, 1, 0, 2.47, 0.770},      {kHeat, 2, 0, 1.48, 0.885}, {kHeat, 3, 0, 0.79, 0}, {kHeat, 4, 0, 0.28, 0},
    {kWave, 1, 0, 2.17, 0.797},      {kWave, 2, 0, 1.23, 0.987}, {kWave, 3, 0, 0.77, 0}, {kWave, 4, 0, 0.17, 0},
    {kHeat, 1, 1, 2.21, 0.825},      {kHeat, 2, 1, 1.34, 0.937}, {kHeat, 3, 1, 0.67, 0}, {kHeat, 4, 1, 0.28, 0},
    {kWave, 1, 1, 2.26, 0.868},      {kWave, 2, 1, 1.39, 0.980}, {kWave, 3, 1, 0.80, 0}, {kWave, 4, 1, 0.20, 0},
    {kGrayScott, 1, 0, 1.56, 0.806},
};
// The H100's copy bandwidth per SM cycle: 2,795 GB/s in process (2,782-2,809) over 132 SMs at
// 1.98 GHz, bytes per SM per cycle.
constexpr double kH100BytesPerSmCycle = 2795.0 / (132 * 1.98);

// The entry's figure, else the least one measured at this radius, else the least measured.
double measured(int e, int R, bool fp64, double MeasuredGain::*field) {
  double at_r = 0, anywhere = 0;
  for (const MeasuredGain& g : kMeasuredGains) {
    if (g.*field <= 0) continue;
    if (g.eq == e && g.R == R && g.fp64 == int(fp64)) return g.*field;
    if (g.R == R) at_r = at_r > 0 ? std::min(at_r, g.*field) : g.*field;
    anywhere = anywhere > 0 ? std::min(anywhere, g.*field) : g.*field;
  }
  return at_r > 0 ? at_r : anywhere;
}
}  // namespace

bool temporal_pays(Equation eq, int R, bool fp64, Boundary bc) {
  const int e = eq_index(eq);
  double gain = measured(e, R, fp64, &MeasuredGain::speedup);
  if (bc == Boundary::Fixed) gain *= measured(e, R, fp64, &MeasuredGain::fixed_share);
  const DeviceInfo d = query_device();
  const double bytes_per_sm_cycle =
      measure_device_copy_gbs() / (double(std::max(1, d.sm_count)) * std::max(1, d.clock_khz) * 1e-6);
  // A predicted gain within 3% of even is not taken: the wave fp64 at R = 2 on an H200, predicted
  // 1.002x, ran 2.8% faster than single steps with diagnostics every 1,000 steps and 2.8% slower
  // with the case's every 25 (docs/performance.md, "Temporal blocking").
  return gain * kH100BytesPerSmCycle / bytes_per_sm_cycle > 1.03;
}

template <class T>
int launch_stencil_temporal(Equation eq, int R, const GridView<T>* in, const GridView<T>* out,
                            const StencilCoeffs<T>& coeffs, const TemporalParams<T>& params, Boundary bc,
                            const T* boundary_values, cudaStream_t s, KernelRecord& rec, const TemporalOptions& opt) {
  constexpr int VW = V<T>::n;
  const int e = eq_index(eq);
  if (e < 0) throw Error("--tiling temporal: no temporally blocked kernel for this equation");
  const std::string what = std::string("temporal ") + eq_tag(e) + " R=" + std::to_string(R);
  if (R < 1 || R > kMaxRadius) throw Error(what + ": radius must be 1.." + std::to_string(kMaxRadius));
  if (coeffs.radius != R) throw Error(what + ": coefficient table of radius " + std::to_string(coeffs.radius));
  const int nin = stencil_field_count(eq), nout = eq == Equation::Heat ? 1 : 2;
  const GridView<T>& g = in[0];
  if (g.nx < 1 || g.ny < 1 || g.nz < 1) throw Error(what + ": empty grid");
  // The kernel holds a row's offset within a plane in 32 bits (rowoff).
  if (g.sz > 0x7fffffffLL)
    throw Error(what + ": an x-y plane of " + std::to_string(g.sz) +
                " points is more than the kernel addresses (2^31)");
  auto same = [&](const GridView<T>& v) {
    return v.origin && v.nx == g.nx && v.ny == g.ny && v.nz == g.nz && v.sy == g.sy && v.sz == g.sz;
  };
  for (int f = 0; f < nin; ++f)
    if (!same(in[f])) throw Error(what + ": input field " + std::to_string(f) + " is not on the grid of field 0");
  for (int f = 0; f < nout; ++f) {
    if (!same(out[f])) throw Error(what + ": output field " + std::to_string(f) + " is not on the grid of input 0");
    for (int h = 0; h < nin; ++h)
      if (out[f].origin == in[h].origin)
        throw Error(what + ": output " + std::to_string(f) + " is input " + std::to_string(h) +
                    " (a pass cannot work in place)");
  }
  if (bc == Boundary::Fixed && !boundary_values) throw Error(what + ": fixed boundaries need their values");

  const DeviceInfo d = query_device();
  if (!d.usable) throw Error(what + ": " + d.why_not);
  const std::vector<Entry<T>>& v = entries<T>(e, R);
  const int si = pick_shape(v, e, R, opt, d.smem_optin_per_block);
  const Entry<T>& en = v[si];
  const TemporalShape& sh = en.shape;
  const std::size_t state = std::size_t(nin) * std::size_t(g.interior_points()) * sizeof(T);
  const int T_ = opt.steps > 0 ? opt.steps : default_steps(e, R, sh, VW, state, d.l2_bytes);
  if (T_ > sh.max_steps)
    throw Error(what + ": " + std::to_string(T_) + " fused steps asked, shape " + shape_text(sh) + " fuses at most " +
                std::to_string(sh.max_steps));

  TArgs<T> a{};
  for (int f = 0; f < 2; ++f) {
    a.in[f] = in[f < nin ? f : 0].origin;
    a.out[f] = out[f < nout ? f : 0].origin;
    a.bv[f] = bc == Boundary::Fixed ? boundary_values[f < nin ? f : 0] : T(0);
  }
  a.nx = g.nx, a.ny = g.ny, a.nz = g.nz;
  a.sy = g.sy, a.sz = g.sz;
  a.steps = T_;
  a.xh = x_halo(T_, R, VW);
  a.wout = sh.width - 2 * a.xh;
  a.hout = sh.height - 2 * T_ * R;
  if (a.wout < VW || a.hout < 1)
    throw Error(what + ": " + std::to_string(T_) + " steps leave no output in a " + std::to_string(sh.width) + " x " +
                std::to_string(sh.height) + " region");
  a.fixed = bc == Boundary::Fixed;
  for (const int planes : {opt.z_below, opt.z_above})
    if (planes != 0 && planes < T_ * R)
      throw Error(what + ": " + std::to_string(planes) + " neighbour planes beside the grid, fewer than the T R = " +
                  std::to_string(T_ * R) + " a pass of " + std::to_string(T_) + " steps reads");
  if (bc == Boundary::Periodic && (opt.z_below == 0) != (opt.z_above == 0))
    throw Error(what + ": periodic z with a neighbour on one side only");
  a.zlo = opt.z_below, a.zhi = opt.z_above;
  a.co = coeffs;
  a.prm = params;

  set_shared_memory_once(en.kernel, sh.smem_bytes, true, what.c_str());
  int per_sm = 0;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, en.kernel, 32 * sh.block_y, sh.smem_bytes),
                     what);
  if (per_sm < 1) throw Error(what + ": shape " + shape_text(sh) + " does not fit on an SM of this device");
  const long long tx = ceil_div(g.nx, a.wout), ty = ceil_div(g.ny, a.hout);
  // The last column's outputs are what is left of nx (at 512 wide and 120 a tile, 32 points): where
  // they and their x halo take at most half the warp's vectors, its tiles hold that many regions
  // side by side (bands, each its own rows), so that the column costs a fraction of a full one
  // (512^3, fp32, T R <= 4: 3 bands of 10 vectors, 87 tiles instead of 100).
  const int last_vecs = ceil_div(g.nx - (tx - 1) * a.wout + 2LL * a.xh, VW);
  // Not the wave at R >= 2 where the L2 is shallow (deep_memory): its pass is bound by DRAM there,
  // and the banded tiles cost L2 hits. 512^3 on an H100, ms a step, bands / none: fp32 R = 2
  // 0.5166 / 0.4774 (Nsight Compute: DRAM reads 1.39 / 1.18 GB a pass, L2 hit rate 68 / 72%,
  // instructions 416 / 486 M), fp64 0.8981 / 0.8532; on an H200 0.4095 / 0.4516 and 0.8203 /
  // 0.8407.
  int bands =
      e == kWave && R >= 2 && d.l2_bytes && !deep_memory(d.l2_bytes) ? 1 : int(std::min<long long>(32 / last_vecs, ty));
  int most = opt.bands;
  if (const char* ev = std::getenv(env::kTemporalBands); most == 0 && ev && *ev) {
    char* end = nullptr;
    const long v = std::strtol(ev, &end, 10);
    if (*end || v < 1 || v > 32) throw Error(std::string("TIERSIM_TEMPORAL_BANDS must be 1..32, not '") + ev + "'");
    most = int(v);
  }
  if (most > 0) bands = std::min(bands, most);
  a.tiles_x = int(tx), a.tiles_y = int(ty);
  a.bands = std::max(1, bands), a.band_vecs = last_vecs;
  const long long tiles = a.bands > 1 ? (tx - 1) * ty + ceil_div(g.ny, (long long)a.bands * a.hout) : tx * ty;
  if (opt.z_chunk > 0 && opt.blocks > 0) throw Error(what + ": z_chunk and blocks both asked; one of them");
  // Shares only for heat at R = 1 (walks_shares). Blocks at different planes of neighbouring
  // tiles no longer meet in the L2 on the halo rows they share, so a pass reads the DRAM ~1.5x as
  // much (Nsight Compute, heat fp32 R = 1 at 512^3: 558 -> 849 MB a pass on both devices). Heat at
  // R = 1 streams one field and has the room: 512^3 (the last column whole, not banded), ms a
  // step, chunks / shares, H200 and H100, fp32 0.2107 / 0.1949 and 0.2110 / 0.1974, fp64 0.4135 /
  // 0.3939 and 0.4143 / 0.3992 (banded, fp32's chunks fill two waves and win: choose_split). The rest
  // lost: the wave at R = 1 (fp32 0.2781 / 0.3153 on the H200, 0.2900 / 0.3222 on the H100; fp64
  // even on the H200, 1-4% slower on the H100), heat at R = 2 (fp32 0.3468 / 0.3581, 0.3476 /
  // 0.3637) and the fp64 wave at R = 2 on the H100 (0.8606 / 1.0714; the waves at R = 2 gained
  // 2-4% on the H200).
  bool shares = walks_shares(e, R);
  TemporalOptions so = opt;
  if (const char* ev = std::getenv(env::kTemporalSplit); ev && *ev && so.z_chunk == 0 && so.blocks == 0) {
    const std::string v = ev;
    int n = 0;
    if (v == "chunks")
      shares = false;
    else if (std::sscanf(ev, "chunks:%d", &n) == 1 && n > 0)
      so.z_chunk = n;
    else if (std::sscanf(ev, "shares:%d", &n) == 1 && n > 0)
      so.blocks = n;
    else if (v == "shares")
      so.blocks = int(std::min<long long>((long long)per_sm * d.sm_count, tiles * g.nz));
    else
      throw Error(std::string("TIERSIM_TEMPORAL_SPLIT must be chunks, chunks:N, shares or shares:N, not '") + ev + "'");
  }
  if (so.blocks > 0 && !shares)
    throw Error(what + ": blocks walking shares of the work are built for heat at R = 1 only");
  const Split split = choose_split(so, tiles, g.nz, (long long)per_sm * d.sm_count, 2 * T_ * R, shares);
  a.units = tiles * g.nz;
  a.blocks = int(split.blocks);
  a.zchunk = split.zchunk;
  const long long tz = ceil_div(g.nz, a.zchunk);
  if (a.blocks == 0 && (tiles > 0x7fffffffLL || tz > 65535))
    throw Error(what + ": grid too large for one launch (" + std::to_string(tiles) + " tiles x " + std::to_string(tz) +
                " z chunks)");
  const dim3 grid = a.blocks > 0 ? dim3{unsigned(a.blocks), 1, 1} : dim3{unsigned(tiles), unsigned(tz), 1};
  en.launch(a, grid, s);
  // Stable names: stencil_heat_temporal_r1_t4; a shape other than the default adds its own.
  std::string name =
      std::string("stencil_") + eq_tag(e) + "_temporal_r" + std::to_string(R) + "_t" + std::to_string(T_);
  if (si != 0)
    name += std::string("_by") + std::to_string(sh.block_y) + "_ry" + std::to_string(sh.rows_per_thread) + "_p" +
            std::to_string(sh.planes_ahead);
  TIERSIM_CUDA_CHECK_LAUNCH(
      "stencil_temporal_kernel",
      name + ", grid " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) + ", " +
          (a.blocks > 0 ? std::to_string(a.blocks) : std::to_string(tiles) + "x" + std::to_string(tz)) + " blocks");

  // Cost model. Compulsory: the T single steps this pass stands for, as the single-step engine
  // counts each (heat 2, wave 3, Gray-Scott 4 accesses per point), so that GB/s over the pass's
  // time is the bandwidth a single-step kernel would need to keep up. Modelled: what the pass
  // moves: every block reads its region (output tile, x halo in whole vectors, T R rows of y
  // halo, clipped where the grid ends) for each of its segments' planes plus 2 T R, the wave's
  // u(t - dt) on the rows level 1 computes, and writes every output field once.
  StencilProblem p;
  p.equation = eq, p.nx = g.nx, p.ny = g.ny, p.nz = g.nz, p.radius = R;
  const double pts = double(g.interior_points());
  // Points a tile reads of one plane: each region's (a banded tile's bands in the grid) columns
  // times (its rows per field, and the wave's u(t - dt) rows).
  auto tile_points = [&](long long tile) {
    int bx, by;
    tile_at(a, tile, bx, by);
    const double cols = double(
        std::min<long long>(32, ceil_div(std::min<long long>(a.wout, g.nx - bx * a.wout) + 2LL * a.xh, VW)) * VW);
    double points = 0;
    for (int b = 0; b < tile_bands(a, bx); ++b) {
      const long long oy = band_row0(a, bx, by, b);
      if (oy >= g.ny) break;
      const long long rows = std::min<long long>(sh.height, std::min<long long>(a.hout, g.ny - oy) + 2LL * T_ * R);
      const double prev_rows = double(std::max<long long>(0, std::min<long long>(rows, sh.height - R) - R));
      points += cols * (double(nin == 2 && eq == Equation::GrayScott ? 2 : 1) * double(rows) +
                        (eq == Equation::Wave ? prev_rows : 0));
    }
    return points;
  };
  double reads = 0;
  for_each_segment(split, tiles, g.nz, [&](long long, long long tile, long long planes) {
    reads += tile_points(tile) * double(planes + 2LL * T_ * R);
  });
  rec.kernel = name;
  rec.bytes_compulsory = double(T_) * stencil_compulsory_bytes(p, sizeof(T));
  rec.bytes_modelled = (reads + double(nout) * pts) * sizeof(T);
  rec.flops = double(T_) * stencil_flops_per_point(p) * pts;
  rec.work = double(T_) * pts;
  rec.work_unit = "points";
  return T_;
}

#define TIERSIM_TEMPORAL_INSTANTIATE(T)                                                                          \
  template int launch_stencil_temporal<T>(Equation, int, const GridView<T>*, const GridView<T>*,                 \
                                          const StencilCoeffs<T>&, const TemporalParams<T>&, Boundary, const T*, \
                                          cudaStream_t, KernelRecord&, const TemporalOptions&);
TIERSIM_TEMPORAL_INSTANTIATE(float)
TIERSIM_TEMPORAL_INSTANTIATE(double)

}  // namespace tiersim::cuda
