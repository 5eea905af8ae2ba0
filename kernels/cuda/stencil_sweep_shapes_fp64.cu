// The TIERSIM_STENCIL_SHAPE sweep shapes in fp64 (stencil_sweep_shapes.cuh).
#include <tuple>

#include "kernels/cuda/stencil_sweep_shapes.cuh"

namespace tiersim::cuda {

auto stencil_sweep_shape_fp64_variants() { return sweep_shape_variants<double>(StencilEquations{}); }

StencilCoeffs<double>* sweep_shapes_bank(double) { return this_bank<double>(); }

}  // namespace tiersim::cuda
