// The stencil update's dispatch: launch_stencil_update turns the radius and the coefficient space
// into template arguments and hands the launch to its tiling's family (stencil_families.cuh); the
// __constant__ coefficient table goes into every family's bank.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "base/env.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/stencil_families.cuh"

namespace tiersim::cuda {
namespace {

template <class T, class Eq, int R>
StencilLaunchInfo launch_r(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  const bool c = l.coeffs == CoeffSpace::Constant;
  if (l.tiling == Tiling::None) return c ? launch_untiled<T, Eq, R, true>(l, s) : launch_untiled<T, Eq, R, false>(l, s);
  return c ? launch_tiled<T, Eq, R, true>(l, s) : launch_tiled<T, Eq, R, false>(l, s);
}

}  // namespace

template <class T, class Eq>
StencilLaunchInfo launch_stencil_update(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  switch (l.radius) {
    case 1:
      return launch_r<T, Eq, 1>(l, s);
    case 2:
      return launch_r<T, Eq, 2>(l, s);
    case 3:
      return launch_r<T, Eq, 3>(l, s);
    case 4:
      return launch_r<T, Eq, 4>(l, s);
    default:
      throw Error("stencil radius must be 1..4, not " + std::to_string(l.radius));
  }
}

namespace {
template <class... Eqs>
auto update_variants(EquationList<Eqs...>) {
  return std::make_tuple(&launch_stencil_update<float, Eqs>..., &launch_stencil_update<double, Eqs>...);
}
}  // namespace

// The update of every listed equation in both precisions, for stencil_cuda.cu (see
// stencil_families.cuh).
auto stencil_update_variants() { return update_variants(StencilEquations{}); }

namespace {
// Every kernel file's bank of T.
template <class T>
std::vector<StencilCoeffs<T>*> constant_banks() {
  std::vector<StencilCoeffs<T>*> b{untiled_bank(T{}), tiled_bank(T{})};
  if constexpr (std::is_same_v<T, float>) b.push_back(tuned_bank(T{}));
#if TIERSIM_STENCIL_SWEEP_SHAPES
  b.push_back(sweep_shapes_bank(T{}));
#endif
  return b;
}
}  // namespace

template <class T>
void upload_constant_coeffs(const StencilCoeffs<T>& c, cudaStream_t s) {
  for (StencilCoeffs<T>* bank : constant_banks<T>())
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(bank, &c, sizeof c, cudaMemcpyHostToDevice, s),
                       "coefficient table to __constant__ memory");
}
template <class T>
void prepare_constant_banks() {
  (void)constant_banks<T>();
}
template void upload_constant_coeffs<float>(const StencilCoeffs<float>&, cudaStream_t);
template void upload_constant_coeffs<double>(const StencilCoeffs<double>&, cudaStream_t);
template void prepare_constant_banks<float>();
template void prepare_constant_banks<double>();

SweepShape sweep_shape_from_env() {
  static const SweepShape sh = [] {
    SweepShape r;
    if (const char* e = std::getenv(env::kStencilShape))
      if (const int n = std::sscanf(e, "%d,%d,%d,%d,%d,%d,%d", &r.kernel, &r.by, &r.pf, &r.ry, &r.minb, &r.cx, &r.cy);
          n != 5 && n != 7)
        throw Error(std::string("TIERSIM_STENCIL_SHAPE must be K,BY,PF,RY,MINB[,CX,CY], not '") + e + "'");
    return r;
  }();
  return sh;
}

}  // namespace tiersim::cuda
