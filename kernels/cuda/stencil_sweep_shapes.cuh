// The TIERSIM_STENCIL_SHAPE sweep shapes (the benchmark's tile-shape sweeps, docs/performance.md):
// shapes no default uses, compiled only with -DTIERSIM_STENCIL_SWEEP_SHAPES=ON (CMakeLists.txt),
// by stencil_sweep_shapes.cu (fp32) and stencil_sweep_shapes_fp64.cu.
#pragma once

#include <type_traits>

#include "kernels/cuda/stencil_prefetch.cuh"
#include "kernels/cuda/stencil_ring.cuh"

namespace tiersim::cuda {

template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_sweep_shape(const StencilLaunch<T, Eq>& l, const SweepShape& e, cudaStream_t s) {
  // The heat equation in fp32 sweeps its ring shapes in depth, with both coefficient spaces; the
  // other equations and fp64 the shapes each family's defaults use, constant coefficients.
  constexpr bool kHeat32 = std::is_same_v<T, float> && std::is_same_v<Eq, equations::Heat>;
  if constexpr (!kHeat32 && !CONST) {
    throw Error("TIERSIM_STENCIL_SHAPE: only --coeffs constant has sweep shapes for this equation and precision");
  } else {
#define TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)                                             \
  if (e.kernel == K_ && e.by == BY_ && e.pf == PF_ && e.ry == RY_ && e.minb == MB_) {     \
    if constexpr (K_ == 0)                                                                \
      return launch_prefetch<T, R, Eq, CONST, BY_, PF_, RY_, MB_>(l, s);                  \
    else                                                                                  \
      return launch_ring<T, R, Eq, CONST, BY_, PF_, RY_, MB_, K_ == 2>(l, s, e.cx, e.cy); \
  }
#define TIERSIM_SHAPE_HEAT32(K_, BY_, PF_, RY_, MB_) \
  if constexpr (kHeat32) TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)
#define TIERSIM_SHAPE_HEAT32_R4(K_, BY_, PF_, RY_, MB_) \
  if constexpr (kHeat32 && R == 4) TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)
    // Every swept equation and precision.
    TIERSIM_SHAPE(0, 8, 2, 1, 0)
    TIERSIM_SHAPE(0, 4, 2, 2, 0)
    TIERSIM_SHAPE(0, 16, 2, 1, 0)
    TIERSIM_SHAPE(0, 8, 2, 2, 0)
    TIERSIM_SHAPE(1, 16, 4, 1, 0)
    TIERSIM_SHAPE(1, 8, 4, 2, 0)
    TIERSIM_SHAPE(2, 16, 4, 1, 0)
    TIERSIM_SHAPE(2, 8, 4, 2, 0)
    TIERSIM_SHAPE(2, 8, 2, 4, 0)
    // Heat fp32: ring shapes in depth.
    TIERSIM_SHAPE_HEAT32(1, 8, 2, 1, 0)
    TIERSIM_SHAPE_HEAT32(1, 8, 4, 1, 0)
    TIERSIM_SHAPE_HEAT32(1, 16, 2, 1, 0)
    TIERSIM_SHAPE_HEAT32(1, 4, 2, 2, 0)
    TIERSIM_SHAPE_HEAT32(1, 4, 4, 2, 0)
    // R = 4 only (compile time): blocks per SM, ring depth, 16 warps x 2 rows, deeper and
    // shallower bulk tensor copy rings.
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 2, 2, 2)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 6, 2, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 16, 3, 2, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 16, 4, 2, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 4, 3, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 6, 3, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 2, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 4, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(1, 8, 5, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(2, 8, 4, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(2, 8, 1, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(2, 8, 3, 4, 0)
    TIERSIM_SHAPE_HEAT32_R4(2, 8, 4, 3, 0)
    // Where the defaults sit under 85% of copy for the whole step (heat from R = 2, heat fp64,
    // the wave fp64 at R = 4, Gray-Scott fp32 from R = 2): the bulk-copy ring with more warps
    // resident, 16 warps a block or 2 and 3 blocks an SM (the registers held to 128 and 85).
    constexpr bool kShort = (std::is_same_v<Eq, equations::Heat> && (R >= 2 || !kHeat32)) ||
                            (std::is_same_v<Eq, equations::Wave> && !std::is_same_v<T, float> && R == 4) ||
                            (std::is_same_v<Eq, equations::GrayScott> && R >= 2);
    constexpr bool kOneField = Eq::kFields == 1;
#define TIERSIM_SHAPE_IF(C_, K_, BY_, PF_, RY_, MB_) \
  if constexpr (CONST && kShort && (C_)) TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)
    TIERSIM_SHAPE_IF(kOneField || R == 2, 2, 16, 2, 2, 0)
    TIERSIM_SHAPE_IF(kOneField && R == 2, 2, 8, 2, 4, 2)
    TIERSIM_SHAPE_IF(kOneField || R == 2, 2, 8, 2, 2, 2)
    TIERSIM_SHAPE_IF(kOneField && R <= 3, 2, 8, 2, 2, 3)
    TIERSIM_SHAPE_IF(!kOneField, 2, 16, 2, 1, 0)
#undef TIERSIM_SHAPE_IF
#undef TIERSIM_SHAPE_HEAT32_R4
#undef TIERSIM_SHAPE_HEAT32
#undef TIERSIM_SHAPE
    throw Error("TIERSIM_STENCIL_SHAPE: shape not built");
  }
}

namespace {

// Every variant of the swept equations in precision T (stencil_families.cuh).
template <class T, class Eq>
auto sweep_shape_variants_of() {
  if constexpr (kSwept<T, Eq>)
    return std::make_tuple(&launch_sweep_shape<T, Eq, 1, true>, &launch_sweep_shape<T, Eq, 1, false>,
                           &launch_sweep_shape<T, Eq, 2, true>, &launch_sweep_shape<T, Eq, 2, false>,
                           &launch_sweep_shape<T, Eq, 3, true>, &launch_sweep_shape<T, Eq, 3, false>,
                           &launch_sweep_shape<T, Eq, 4, true>, &launch_sweep_shape<T, Eq, 4, false>);
  else
    return std::tuple<>();
}
template <class T, class... Eqs>
auto sweep_shape_variants(EquationList<Eqs...>) {
  return std::tuple_cat(sweep_shape_variants_of<T, Eqs>()...);
}

}  // namespace
}  // namespace tiersim::cuda
