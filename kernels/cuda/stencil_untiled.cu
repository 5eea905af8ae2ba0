// --tiling none: one thread per (x, y) column walking a chunk of z planes; every neighbour is a
// read-only (LDG.CONSTANT) load and L1/L2 catch the re-reads. Every listed equation, both
// precisions, R = 1..4, both coefficient spaces.
#include <tuple>

#include "kernels/cuda/stencil_coeff_bank.cuh"
#include "kernels/cuda/stencil_tile.cuh"

namespace tiersim::cuda {
namespace {

constexpr int kNoneBY = 8;

template <class T, int R, class Eq, class C>
__device__ __forceinline__ void none_body(const Args<T, Eq>& a, const C& co) {
  constexpr int NS = Eq::kFields;
  const int x = blockIdx.x * 32 + threadIdx.x;
  const int y = blockIdx.y * kNoneBY + threadIdx.y;
  if (x >= a.nx || y >= a.ny) return;
  const int z0 = chunk_start(a), z1 = min(z0 + a.zchunk, a.nz);
  const long long sy = a.sy, sz = a.sz;
  for (int z = z0; z < z1; ++z) {
    const long long o = x + y * sy + z * sz;
    auto lap = [&](const T* __restrict__ g) {
      return laplacian<R>(co, __ldg(g + o), [&](int axis, int d) {
        return __ldg(g + o + (axis == 0 ? (long long)d : axis == 1 ? d * sy : d * sz));
      });
    };
    T u[NS], lu[NS], o_new[NS];
    u[0] = __ldg(a.in0 + o), lu[0] = lap(a.in0);
    if constexpr (NS == 2) u[1] = __ldg(a.in1 + o), lu[1] = lap(a.in1);
    T up = 0;
    if constexpr (Eq::kPreviousLevel) up = a.prev[o];
    Eq::update(a.prm, u, lu, up, o_new);
    a.out0[o] = o_new[0];
    if constexpr (NS == 2) a.out1[o] = o_new[1];
  }
}

template <class T, int R, class Eq, bool CONST>
__global__ void __launch_bounds__(32 * kNoneBY)
    stencil_none_kernel(Args<T, Eq> a, const StencilCoeffs<T>* __restrict__ gco) {
  if constexpr (CONST)
    none_body<T, R, Eq>(a, const_coeffs<T>());
  else
    none_body<T, R, Eq>(a, *gco);
}

template <class T, class Eq>
auto untiled_variants_of() {
  return std::make_tuple(&launch_untiled<T, Eq, 1, true>, &launch_untiled<T, Eq, 1, false>,
                         &launch_untiled<T, Eq, 2, true>, &launch_untiled<T, Eq, 2, false>,
                         &launch_untiled<T, Eq, 3, true>, &launch_untiled<T, Eq, 3, false>,
                         &launch_untiled<T, Eq, 4, true>, &launch_untiled<T, Eq, 4, false>);
}
template <class... Eqs>
auto untiled_variants(EquationList<Eqs...>) {
  return std::tuple_cat(untiled_variants_of<float, Eqs>()..., untiled_variants_of<double, Eqs>()...);
}

}  // namespace

template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_untiled(const StencilLaunch<T, Eq>& l, cudaStream_t s) {
  check_wraps(l, false);  // reads every halo: never built to wrap
  Args<T, Eq> a = make_args(l);
  const long long tx = ceil_div(a.nx, 32), ty = ceil_div(a.ny, kNoneBY);
  int per_sm = 1;
  auto kern = stencil_none_kernel<T, R, Eq, CONST>;
  TIERSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * kNoneBY, 0));
  if (l.prepare) return {};
  a.zchunk = l.tuning.z_chunk > 0 ? std::min(l.tuning.z_chunk, a.nz)
                                  : std::max(16, choose_zchunk(0, tx * ty, a.nz, per_sm * l.sm_count, R));
  const dim3 grid(unsigned(tx), unsigned(ty), z_chunks(l, a));
  kern<<<grid, dim3(32, kNoneBY), 0, s>>>(a, l.coeffs_global);
  const std::string name = std::string("stencil_") + Eq::kKernelTag + "_none_r" + std::to_string(R);
  TIERSIM_CUDA_CHECK_LAUNCH("stencil_none_kernel", grid_text(name, a));
  // Model: L1 catches the re-reads inside a block, so each block requests its footprint once:
  // its 32 x 8 columns over the chunk plus 2R planes, and the x and y halo columns over the chunk.
  const double ns = Eq::kFields;
  const double per_block = 32.0 * kNoneBY * (a.zchunk + 2.0 * R) + 2.0 * R * (kNoneBY + 32.0) * a.zchunk;
  const double reads = ns * double(grid.x) * grid.y * grid.z * per_block;
  const double pts = double(a.nx) * a.ny * z_planes(l, a);
  const double writes = pts * ns + (Eq::kPreviousLevel ? pts : 0);
  return {name, (reads + writes) * sizeof(T)};
}

// Every variant of every listed equation (stencil_families.cuh).
auto stencil_untiled_variants() { return untiled_variants(StencilEquations{}); }

StencilCoeffs<float>* untiled_bank(float) { return this_bank<float>(); }
StencilCoeffs<double>* untiled_bank(double) { return this_bank<double>(); }

}  // namespace tiersim::cuda
