// --tiling shared: the tile shape each equation and precision runs with by default (the table of
// shapes); for the heat equation in fp32 also the ring shapes --block-y / --prefetch choose and
// the TIERSIM_STENCIL_SHAPE sweeps.
// Included by stencil_tiled_fp32.cu and stencil_tiled_fp64.cu, which instantiate launch_tiled.
#pragma once

#include <type_traits>

#include "kernels/cuda/stencil_prefetch.cuh"
#include "kernels/cuda/stencil_ring.cuh"

namespace tiersim::cuda {

template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_tiled(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  if constexpr (kHeatTraffic<T, Eq>) {
    if constexpr (std::is_same_v<Eq, equations::Heat>) {  // the sweeps are the heat equation's
      if (const SweepShape shape = sweep_shape_from_env(); shape.kernel >= 0) {
#if TIERSIM_STENCIL_SWEEP_SHAPES
        return launch_sweep_shape<R, CONST>(l, shape, s);
#else
        throw Error(
            "TIERSIM_STENCIL_SHAPE is set, but this build has no sweep shapes (configure with "
            "-DTIERSIM_STENCIL_SWEEP_SHAPES=ON)");
#endif
      }
    }
    // Defaults (sweeps in docs/performance.md, 512^3, constant): R = 1 the register-prefetch
    // kernel, 4 warps x 2 rows (93% of copy; the ring kernel 75-79%). R = 2 ring, 16 warps x 1
    // row, P = 4; R = 3 ring, 8 warps x 2 rows, P = 4; R = 4 ring filled by the bulk tensor copy,
    // 8 warps x 4 rows (a 128 x 32 tile), P = 2. From R = 2 in clusters of 1 x 2 tiles paced
    // plane by plane, so that the y-halo rows a block reads are still in L2 when its neighbour
    // reads them (H100: R = 2 81.7 -> 85.0%, R = 3 78.5 -> 82.2%, R = 4 76.8 -> 85.8%). Before
    // Hopper: no clusters, and R = 4 falls back to the cp.async ring.
    if constexpr (std::is_same_v<Eq, equations::Heat>)
      if (l.tuning.block_y || l.tuning.prefetch)
        return launch_tuned<R, CONST>(l, l.tuning.block_y ? l.tuning.block_y : 8,
                                      l.tuning.prefetch ? l.tuning.prefetch : 4, s);
    if constexpr (R == 1)
      return launch_prefetch<T, R, Eq, CONST, 4, 2, 2, 0>(l, s);
    else if constexpr (R == 2)
      return launch_ring<T, R, Eq, CONST, 16, 4, 1>(l, s, 1, 2);
    else if constexpr (R == 3)
      return launch_ring<T, R, Eq, CONST, 8, 4, 2>(l, s, 1, 2);
    else if (l.cc_major >= 9)
      return launch_ring<T, R, Eq, CONST, 8, 2, 4, 0, true>(l, s, 1, 2);
    else
      return launch_ring<T, R, Eq, CONST, 8, 4, 4>(l, s);
  } else {
    // Tile shape, from the sweeps in docs/performance.md (H200, heat fp32, 512^3). fp64 and two
    // fields: 8 warps (16 would cap the registers at 128 and spill at R = 4).
    constexpr int kBY = Eq::kFields > 1 || std::is_same_v<T, double> ? 8 : 16;
    constexpr int kPF = 2;
    return launch_prefetch<T, R, Eq, CONST, kBY, kPF>(l, s);
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
