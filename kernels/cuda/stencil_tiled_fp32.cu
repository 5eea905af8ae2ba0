// --tiling shared in fp32: launch_tiled (stencil_shapes.cuh) for every listed equation.
#include <tuple>

#include "kernels/cuda/stencil_shapes.cuh"

namespace tiersim::cuda {

auto stencil_tiled_fp32_variants() { return tiled_variants<float>(StencilEquations{}); }

StencilCoeffs<float>* tiled_bank(float) { return this_bank<float>(); }

}  // namespace tiersim::cuda
