// CUDA stencil backend (kernels follow in kernels/cuda/stencil_kernels.cu).
#include "kernels/stencil_engine.hpp"

namespace tiersim {

std::unique_ptr<StencilEngine> make_stencil_cuda(const Strategy&, const StencilProblem&, const StencilTuning&) {
  throw Error("--backend cuda: the CUDA stencil kernels are not built yet");
}

}  // namespace tiersim
