// The TIERSIM_STENCIL_SHAPE sweep shapes in fp64 (stencil_sweep_shapes.cuh).
#include <tuple>

#include "kernels/cuda/stencil_sweep_shapes.cuh"

namespace tiersim::cuda {

auto stencil_sweep_shape_fp64_variants() { return sweep_shape_variants<double>(StencilEquations{}); }

void upload_sweep_shapes_bank(const StencilCoeffs<double>& c, cudaStream_t s) { upload_to_this_bank(c, s); }

}  // namespace tiersim::cuda
