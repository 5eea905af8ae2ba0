// --tiling shared, shapes chosen with --block-y and --prefetch (StencilTuning): the heat equation
// in fp32 with the ring kernel of 8 or 16 warps of one row and 2 or 4 planes in flight past the R
// the queue needs.
#include <tuple>

#include "kernels/cuda/stencil_ring.cuh"

namespace tiersim::cuda {

template <int R, bool CONST>
StencilLaunchInfo launch_tuned(const StencilLaunch<float, equations::Heat>& l, int block_y, int prefetch,
                               cudaStream_t s) {
  using T = float;
  using Eq = equations::Heat;
  if (block_y == 8 && prefetch == 2) return launch_ring<T, R, Eq, CONST, 8, 2, 1>(l, s);
  if (block_y == 8 && prefetch == 4) return launch_ring<T, R, Eq, CONST, 8, 4, 1>(l, s);
  if (block_y == 16 && prefetch == 2) return launch_ring<T, R, Eq, CONST, 16, 2, 1>(l, s);
  if (block_y == 16 && prefetch == 4) return launch_ring<T, R, Eq, CONST, 16, 4, 1>(l, s);
  throw Error("stencil shared tiling: block_y must be 8 or 16 and prefetch 2 or 4");
}

// Every variant (stencil_families.cuh).
auto stencil_tuned_fp32_variants() {
  return std::make_tuple(&launch_tuned<1, true>, &launch_tuned<1, false>, &launch_tuned<2, true>,
                         &launch_tuned<2, false>, &launch_tuned<3, true>, &launch_tuned<3, false>,
                         &launch_tuned<4, true>, &launch_tuned<4, false>);
}

StencilCoeffs<float>* tuned_bank(float) { return this_bank<float>(); }

}  // namespace tiersim::cuda
