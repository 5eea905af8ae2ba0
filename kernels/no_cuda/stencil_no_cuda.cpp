// Built without CUDA: the CUDA stencil backend reports why it is missing.
#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"

namespace tiersim {

std::unique_ptr<StencilEngine> make_stencil_cuda(const Strategy&, const StencilProblem&, const StencilTuning&) {
  throw Error("--backend cuda: " + query_device().why_not);
}

}  // namespace tiersim
