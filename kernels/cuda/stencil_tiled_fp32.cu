// --tiling shared in fp32: launch_tiled (stencil_shapes.cuh) for every listed equation.
#include <tuple>

#include "kernels/cuda/stencil_shapes.cuh"

namespace tiersim::cuda {

auto stencil_tiled_fp32_variants() { return tiled_variants<float>(StencilEquations{}); }

void upload_tiled_bank(const StencilCoeffs<float>& c, cudaStream_t s) { upload_to_this_bank(c, s); }

}  // namespace tiersim::cuda
