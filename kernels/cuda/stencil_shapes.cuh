// --tiling shared: the tile shape each equation and precision runs with by default (the table of
// shapes); for the heat equation in fp32 also the ring shapes --block-y / --prefetch choose and
// the TIERSIM_STENCIL_SHAPE sweeps.
// Included by stencil_tiled_fp32.cu and stencil_tiled_fp64.cu, which instantiate launch_tiled.
#pragma once

#include <type_traits>

#include "kernels/cuda/stencil_prefetch.cuh"
#include "kernels/cuda/stencil_ring.cuh"
#include "kernels/device_info.hpp"

namespace tiersim::cuda {

// Shapes that differ between devices choose by deep_memory (kernels/device_info.hpp).

// Every bulk-copy ring marches z in clusters of kPairX x kPairY tiles paced plane by plane, so
// that the halo a block reads from its neighbour across is still in L2 when it does: each row's
// x halo is a 16-byte vector in a 32-byte sector of the neighbour's row, which the DRAM delivers
// whole. Pairs across rather than down (1 x 2) cut the DRAM reads of heat R = 2 on an H100 from
// 669 to 634 MB a step (537 compulsory) and the step by 3-4%; clusters of 4 gained less on the
// H100 and lost on the H200. launch_ring turns the pair down where the tiles across are odd.
constexpr int kPairX = 2, kPairY = 1;

template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_tiled(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  if constexpr (kSwept<T, Eq>) {
    if (const SweepShape shape = sweep_shape_from_env(); shape.kernel >= 0) {
#if TIERSIM_STENCIL_SWEEP_SHAPES
      return launch_sweep_shape<T, Eq, R, CONST>(l, shape, s);
#else
      throw Error(
          "TIERSIM_STENCIL_SHAPE is set, but this build has no sweep shapes (configure with "
          "-DTIERSIM_STENCIL_SWEEP_SHAPES=ON)");
#endif
    }
  }
  if constexpr (kHeatTraffic<T, Eq>) {
    // Defaults (sweeps in docs/performance.md, 512^3, constant): R = 1 the register-prefetch
    // kernel, 4 warps x 2 rows (90-92% of copy; the rings 77-81%). R = 2..4 the ring filled by
    // the bulk tensor copy, 8 warps x 4 rows (a 128 x 32 tile), P = 2, in paced pairs of tiles
    // (kPairX x kPairY). Before Hopper: the cp.async rings, without clusters.
    if constexpr (std::is_same_v<Eq, equations::Heat>)
      if (l.tuning.block_y || l.tuning.prefetch)
        return launch_tuned<R, CONST>(l, l.tuning.block_y ? l.tuning.block_y : 8,
                                      l.tuning.prefetch ? l.tuning.prefetch : 4, s);
    // (R = 1 on the H200: held to 96 registers, so that 5 blocks fit an SM; uncapped, with the
    // registers the periodic x halo's stores take, it ran 7% slower (whole step 83.9% of copy
    // against 90.1%). On the H100 the uncapped shape runs 2.9% faster: 91.3% against 88.8%.)
    if constexpr (R == 1) {
      if (deep_memory(l.l2_bytes)) return launch_prefetch<T, R, Eq, CONST, 4, 2, 2, 5>(l, s);
      return launch_prefetch<T, R, Eq, CONST, 4, 2, 2>(l, s);
    } else if (l.cc_major >= 9)
      return launch_ring<T, R, Eq, CONST, 8, 2, 4, 0, true>(l, s, kPairX, kPairY);
    else if constexpr (R == 2)
      return launch_ring<T, R, Eq, CONST, 16, 4, 1>(l, s);
    else if constexpr (R == 3)
      return launch_ring<T, R, Eq, CONST, 8, 4, 2>(l, s);
    else
      return launch_ring<T, R, Eq, CONST, 8, 4, 4>(l, s);
  } else if constexpr (Eq::kFields == 1) {
    // fp64 heat traffic and the wave in both precisions (sweeps in docs/performance.md, 512^3,
    // constant): the ring filled by the bulk tensor copy, 8 warps x 4 rows (a 128 x 32 tile in
    // fp32, 64 x 32 in fp64), P = 2, in paced pairs (H200: the wave 94-97% of copy at
    // R = 1..4 in fp32, against 75-80% for the register-prefetch kernel; the wave fp64 at R = 4 on
    // the H100 90.8%, against 83.5% for 8 x 2, P = 4, which had been ahead while this one spilled
    // for the x halo's stores, kXImagesBuilt). Heat and Allen-Cahn fp64 at R = 1: the
    // register-prefetch kernel (8 x 1 held to 64 registers: 4 blocks an SM, 3 at 68 registers ran
    // 37% slower), but heat on the H200: the bulk-copy ring of 8 x 4 with P = 4, its copies 5
    // planes ahead (at P = 2, 3 it ran 1-3% slower than the register prefetch). Before Hopper: the
    // cp.async ring of the same shape.
    if constexpr (R == 1 && !Eq::kPreviousLevel) {
      // Whole step, no fill: H200 (a build of 23cd90e, three runs) the ring of P = 4 85.3-86.5%
      // (0.6424-0.6440 ms), the register prefetch 84.5-85.1% (0.6502-0.6505; 4 x 2: 83.7%); H100
      // 90.6% (4 x 2; 8 x 1: 72.6%).
      if (deep_memory(l.l2_bytes)) {
        if constexpr (std::is_same_v<Eq, equations::Heat>)
          if (l.cc_major >= 9) return launch_ring<T, R, Eq, CONST, 8, 4, 4, 0, true>(l, s, kPairX, kPairY);
        return launch_prefetch<T, R, Eq, CONST, 8, 2, 1, 4>(l, s);
      }
      return launch_prefetch<T, R, Eq, CONST, 4, 2, 2>(l, s);
    } else if (l.cc_major < 9) {
      return launch_ring<T, R, Eq, CONST, 8, 2, 4>(l, s);
    } else {
      // Heat fp64 at R = 2 on the H100: 16 warps x 2 rows (the same 64 x 32 tile), 84.8% of copy
      // against 83.5% for 8 x 4 (paired down, whole step); on the H200 8 x 4 (update 84.5% against
      // 84.0%).
      if constexpr (!Eq::kPreviousLevel && R == 2)
        if (!deep_memory(l.l2_bytes)) return launch_ring<T, R, Eq, CONST, 16, 2, 2, 0, true>(l, s, kPairX, kPairY);
      // Heat fp64 at R = 4 on the H200: P = 3 (a build of 9ef4cbd, three runs each alternating: 0.6100-0.6120
      // ms, 87.6-88.4% of copy, against 0.6402-0.6416, 85.8-86.3%, for P = 2; P = 3 lost at R = 2, 3 and
      // in fp32). Its ring leaves no room for the row blocks, so the fill writes the y faces (0.015 ms
      // a step at 512^3, counted in those figures' whole step).
      if constexpr (std::is_same_v<Eq, equations::Heat> && sizeof(T) == 8 && R == 4)
        if (deep_memory(l.l2_bytes)) return launch_ring<T, R, Eq, CONST, 8, 3, 4, 0, true>(l, s, kPairX, kPairY);
      return launch_ring<T, R, Eq, CONST, 8, 2, 4, 0, true>(l, s, kPairX, kPairY);
    }
  } else if constexpr (std::is_same_v<T, float>) {
    // Two fields (Gray-Scott) in fp32 (whole step, % of copy). R = 1: register prefetch, on the
    // H100 8 x 1 (88.4%; 4 x 2: 83.8%), while the H200 wants more in flight: 4 x 2 (88.4%; 8 x 1:
    // 80.3%). R >= 2 on Hopper: the bulk tensor copy ring, in paced pairs, of 16 warps x 1 row,
    // P = 2 (its row blocks fit in shared memory: every end read wrapped but at R = 4): at R = 2 on
    // the H100 86.2% against 85.4% for the register prefetch of 16 x 1. On the H200 at R = 4 8 warps
    // x 2 rows: the 16 x 1 ring's update is 2% faster in the benchmark (76.7% against 74.1%) but
    // not in a run (the same median time over 2,000 steps, 2.5% more kernel time in all). Before
    // Hopper the register prefetch of 16 x 1 at R = 2, else the cp.async ring of 8 x 2 rows, P = 4
    // (P = 2 at R = 4: two fields of P = 4 outgrow shared memory).
    if constexpr (R == 1) {
      if (deep_memory(l.l2_bytes)) return launch_prefetch<T, R, Eq, CONST, 4, 2, 2>(l, s);
      return launch_prefetch<T, R, Eq, CONST, 8, 2>(l, s);
    } else {
      constexpr int P = R < 4 ? 4 : 2;
      if (l.cc_major < 9) {
        if constexpr (R == 2) return launch_prefetch<T, R, Eq, CONST, 16, 2>(l, s);
        return launch_ring<T, R, Eq, CONST, 8, P, 2>(l, s);
      }
      if (R == 4 && deep_memory(l.l2_bytes))
        return launch_ring<T, R, Eq, CONST, 8, 2, 2, 0, true>(l, s, kPairX, kPairY);
      return launch_ring<T, R, Eq, CONST, 16, 2, 1, 0, true>(l, s, kPairX, kPairY);
    }
  } else {
    // Two fields in fp64: the register-prefetch kernel of 8 warps (16 would cap the registers at
    // 128 and spill at R = 4).
    return launch_prefetch<T, R, Eq, CONST, 8, 2>(l, s);
  }
}

namespace {

// Addresses of every launch_tiled variant of the listed equations in precision T (see
// stencil_families.cuh).
template <class T, class Eq>
auto tiled_variants_of() {
  return std::make_tuple(&launch_tiled<T, Eq, 1, true>, &launch_tiled<T, Eq, 1, false>, &launch_tiled<T, Eq, 2, true>,
                         &launch_tiled<T, Eq, 2, false>, &launch_tiled<T, Eq, 3, true>, &launch_tiled<T, Eq, 3, false>,
                         &launch_tiled<T, Eq, 4, true>, &launch_tiled<T, Eq, 4, false>);
}
template <class T, class... Eqs>
auto tiled_variants(EquationList<Eqs...>) {
  return std::tuple_cat(tiled_variants_of<T, Eqs>()...);
}

}  // namespace
}  // namespace tiersim::cuda
