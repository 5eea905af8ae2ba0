// The TIERSIM_STENCIL_SHAPE sweep shapes of the heat equation in fp32 (the benchmark's tile-shape
// sweeps, docs/performance.md): shapes no default uses, compiled only with
// -DTIERSIM_STENCIL_SWEEP_SHAPES=ON (CMakeLists.txt).
#include <tuple>

#include "kernels/cuda/stencil_prefetch.cuh"
#include "kernels/cuda/stencil_ring.cuh"

namespace tiersim::cuda {

template <int R, bool CONST>
StencilLaunchInfo launch_sweep_shape(const StencilLaunch<float, equations::Heat>& l, const SweepShape& e,
                                     cudaStream_t s) {
  using T = float;
  using Eq = equations::Heat;
#define TIERSIM_SHAPE(K_, BY_, PF_, RY_, MB_)                                             \
  if (e.kernel == K_ && e.by == BY_ && e.pf == PF_ && e.ry == RY_ && e.minb == MB_) {     \
    if constexpr (K_ == 0)                                                                \
      return launch_prefetch<T, R, Eq, CONST, BY_, PF_, RY_, MB_>(l, s);                  \
    else                                                                                  \
      return launch_ring<T, R, Eq, CONST, BY_, PF_, RY_, MB_, K_ == 2>(l, s, e.cx, e.cy); \
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

// Every variant (stencil_families.cuh).
auto stencil_sweep_shape_variants() {
  return std::make_tuple(&launch_sweep_shape<1, true>, &launch_sweep_shape<1, false>, &launch_sweep_shape<2, true>,
                         &launch_sweep_shape<2, false>, &launch_sweep_shape<3, true>, &launch_sweep_shape<3, false>,
                         &launch_sweep_shape<4, true>, &launch_sweep_shape<4, false>);
}

void upload_sweep_shapes_bank(const StencilCoeffs<float>& c, cudaStream_t s) { upload_to_this_bank(c, s); }

}  // namespace tiersim::cuda
