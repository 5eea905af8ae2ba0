// The TIERSIM_STENCIL_SHAPE sweep shapes in fp32 (stencil_sweep_shapes.cuh).
#include <tuple>

#include "kernels/cuda/stencil_sweep_shapes.cuh"

namespace tiersim::cuda {

auto stencil_sweep_shape_fp32_variants() { return sweep_shape_variants<float>(StencilEquations{}); }

StencilCoeffs<float>* sweep_shapes_bank(float) { return this_bank<float>(); }

}  // namespace tiersim::cuda
