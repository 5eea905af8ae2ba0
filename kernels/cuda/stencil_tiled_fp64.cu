// --tiling shared in fp64: launch_tiled (stencil_shapes.cuh) for every listed equation.
#include <tuple>

#include "kernels/cuda/stencil_shapes.cuh"

namespace tiersim::cuda {

auto stencil_tiled_fp64_variants() { return tiled_variants<double>(StencilEquations{}); }

StencilCoeffs<double>* tiled_bank(double) { return this_bank<double>(); }

}  // namespace tiersim::cuda
