// How the stencil update is spread over translation units (one per idea, and per precision where
// that shortens the build), and what they call of each other. Internal to kernels/cuda/stencil_*.
//
//   stencil_update.cpp      launch_stencil_update: radius, coefficient space and tiling -> a family
//   stencil_untiled.cu      --tiling none: one thread per column, neighbours through L1/L2
//   stencil_tiled_fp32.cu   --tiling shared, fp32: the default shapes (stencil_shapes.cuh) of the
//   stencil_tiled_fp64.cu     register-prefetch (stencil_prefetch.cuh) and ring/TMA
//                             (stencil_ring.cuh) kernels; fp64 in its own file
//   stencil_tuned_fp32.cu   ring shapes chosen by --block-y / --prefetch (StencilTuning), heat
//   stencil_sweep_shapes.cu the TIERSIM_STENCIL_SHAPE sweep shapes, fp32 and (_fp64.cu) fp64
//                             (built with -DTIERSIM_STENCIL_SWEEP_SHAPES=ON only)
//   stencil_tensor_map.cpp  tensor maps of the bulk tensor copy
//   stencil_fields.cu       halo fill, reductions (statistics, wave energy), point source
//
// (The host-only parts are .cpp files: nvcc's passes cost more than the code in them.) Each
// family is instantiated for every equation of kernels/physics/equations.hpp (R = 1..4, both
// coefficient spaces) by a function that takes the addresses of its variants (stencil_*_variants):
// an explicit instantiation cannot run over a list of types, an emitted function that refers to
// every variant makes the compiler emit them.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/cuda/stencil_kernels.cuh"

namespace tiersim::cuda {

// The heat equation's memory traffic: one field read with halos and written, no previous level.
// In fp32 these equations run the shapes the heat sweeps chose (docs/performance.md); a point
// update with a few more flops leaves the kernels as memory-bound.
template <class T, class Eq>
constexpr bool kHeatTraffic = std::is_same_v<T, float>&& Eq::kFields == 1 && !Eq::kPreviousLevel;

// Per family: one update with the shape the family chooses (R: stencil radius; CONST: the table
// in __constant__ memory, else the global copy).
template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_untiled(const StencilLaunch<T, Eq>& l, cudaStream_t s);
template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_tiled(const StencilLaunch<T, Eq>& l, cudaStream_t s);
// The heat equation in fp32 with the ring kernel of block_y warps and prefetch planes in flight (8
// or 16, 2 or 4): the shapes --block-y / --prefetch choose (StencilTuning; the other equations
// run their defaults).
template <int R, bool CONST>
StencilLaunchInfo launch_tuned(const StencilLaunch<float, equations::Heat>& l, int block_y, int prefetch,
                               cudaStream_t s);

// TIERSIM_STENCIL_SHAPE=K,BY,PF,RY,MINB[,CX,CY] (the benchmark's sweeps): kernel (0: register
// prefetch, 1: ring, 2: ring filled by the bulk tensor copy), warps along y, planes ahead (ring:
// P, planes in flight past the R the queue needs), rows per thread, blocks per SM in
// __launch_bounds__ (0: none), and for the ring kernel optionally a cluster of CX x CY tiles paced
// plane by plane. kernel < 0: not set. Heat fp32 has the most shapes (both coefficient spaces);
// heat and wave in fp32 and fp64 and Gray-Scott in fp32 a shorter list (constant coefficients).
struct SweepShape {
  int kernel = -1, by = 0, pf = 0, ry = 0, minb = 0, cx = 1, cy = 1;
};
SweepShape sweep_shape_from_env();  // parsed once (stencil_update.cpp)
template <class T, class Eq>
constexpr bool kSwept = std::is_same_v<Eq, equations::Heat> || std::is_same_v<Eq, equations::Wave> ||
                        (std::is_same_v<Eq, equations::GrayScott> && std::is_same_v<T, float>);
template <class T, class Eq, int R, bool CONST>
StencilLaunchInfo launch_sweep_shape(const StencilLaunch<T, Eq>& l, const SweepShape& shape, cudaStream_t s);

// A map over the allocation of the grid whose interior point (0,0,0) is at `origin`, with its
// pitch (sy), plane (sz), interior ny, nz and halo r; interior (0,0,0) sits at map coordinates
// (gx0, gy0, gz0). Boxes of box_x x box_y x 1 points; outside the map the copy engine fills zeros.
// promote: the L2 fetches 256-byte blocks around each miss, else only the sectors asked for
// (TIERSIM_TMA_L2_PROMOTION overrides either).
template <class T>
CUtensorMap encode_grid_map(const T* origin, long long sy, long long sz, int ny, int nz, int r, int gx0, int gy0,
                            int gz0, int box_x, int box_y, bool promote);

// The files with a __constant__ bank (stencil_coeff_bank.cuh): where each has its own, by the
// scalar type (the argument is a tag).
StencilCoeffs<float>* untiled_bank(float);  // stencil_untiled.cu
StencilCoeffs<double>* untiled_bank(double);
StencilCoeffs<float>* tiled_bank(float);           // stencil_tiled_fp32.cu
StencilCoeffs<double>* tiled_bank(double);         // stencil_tiled_fp64.cu
StencilCoeffs<float>* tuned_bank(float);           // stencil_tuned_fp32.cu
StencilCoeffs<float>* sweep_shapes_bank(float);    // stencil_sweep_shapes.cu
StencilCoeffs<double>* sweep_shapes_bank(double);  // stencil_sweep_shapes_fp64.cu

}  // namespace tiersim::cuda
