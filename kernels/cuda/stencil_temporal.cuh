// Host-callable drivers of the temporally blocked stencil kernels (kernels/cuda/stencil_temporal.cu):
// one pass through HBM advances the fields by T time steps, the intermediate time levels kept on
// chip. No kernel is visible here; nothing outside kernels/cuda (and the GPU tests) includes it.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>
#include <vector>

#include "base/kernel_record.hpp"
#include "kernels/physics/equations.hpp"
#include "layouts/grid.hpp"

namespace tiersim::cuda {

// The equation parameters, as the equations' point updates (kernels/physics/equations/) take
// them; only the one of the pass's equation is read.
template <class T>
struct TemporalParams {
  equations::Heat::Params<T> heat{};
  equations::Wave::Params<T> wave{};
  equations::GrayScott::Params<T> gray_scott{};
};

// Equation Eq's parameters into their member of TemporalParams (nothing for an equation the
// temporal kernels are not built for: temporal_shapes() lists none for it).
template <class Eq, class T>
void set_temporal_params(TemporalParams<T>& p, const typename Eq::template Params<T>& eq) {
  if constexpr (std::is_same_v<Eq, equations::Heat>) p.heat = eq;
  if constexpr (std::is_same_v<Eq, equations::Wave>) p.wave = eq;
  if constexpr (std::is_same_v<Eq, equations::GrayScott>) p.gray_scott = eq;
}

// One instantiated tile shape: warps along y (one 32-lane warp spans the tile's width of 32
// 16-byte vectors), rows per thread, input planes copied ahead, the most steps it fuses.
struct TemporalShape {
  int block_y = 0, rows_per_thread = 0, planes_ahead = 0, max_steps = 0;
  int width = 0, height = 0;   // the region a block holds on chip (points x rows), halos included
  std::size_t smem_bytes = 0;  // dynamic shared memory per block
};

struct TemporalOptions {
  int steps = 0;   // fused steps of this pass, 1..max_steps; 0: temporal_default_steps
  int shape = -1;  // index into temporal_shapes(); -1: TIERSIM_TEMPORAL_SHAPE=BY,RY,P if set, else the
                   // first shape that fits the device's shared memory and fuses `steps` (the default)
  // How the blocks share the work (tiles x output planes), chosen from the SM count where both are 0:
  int z_chunk = 0;  // > 0: a block per tile and chunk of this many output planes, in waves
  int blocks = 0;   // > 0: this many blocks, each walking an equal share of the (tile, plane) work
  // Regions side by side in a tile of the last x column, where its outputs are few (bands): 0 as
  // many as fit in the warp's 32 vectors, 1 none, k at most k.
  int bands = 0;
  // Planes beside the grid in z that hold a neighbour's values at time t (below plane 0 and from
  // plane nz on: a rank's slab and the planes exchanged with the ranks beside it, or a z range of
  // a larger grid): read as interior points instead of wrapped or taken as the boundary value.
  // 0 (a face of the whole grid) or at least T R; on a periodic grid both or neither.
  int z_below = 0, z_above = 0;
};

// The shapes built for an equation, radius and precision, the default first. Empty where the
// equation and radius have no temporal kernel (Gray-Scott beyond R = 1).
std::vector<TemporalShape> temporal_shapes(Equation eq, int R, bool fp64);
// The most steps a pass fuses: the largest max_steps of the built shapes (a pass takes the first
// shape that fuses the steps asked for); 0 where none is built.
int temporal_max_steps(Equation eq, int R, bool fp64);

// The steps a pass fuses when TemporalOptions::steps is 0, for an nx x ny x nz grid (see the
// derivation in stencil_temporal.cu: 4 at R = 1, 2 at R = 2..4, clamped by the
// shape and by the device's L2).
int temporal_default_steps(Equation eq, int R, bool fp64, int nx, int ny, int nz, const TemporalOptions& opt = {});

// Whether fusing steps beats the single-step kernels on this device, for the run's default
// (stencil.temporal_steps = 0; a step count asked for is always honoured). A pass is bound by the
// SMs and takes the same time on an H100 and an H200, while the single step follows the memory
// bandwidth: the speedup measured on an H100 (512^3, kMeasuredGains) scales with the device's copy
// bandwidth per SM cycle (measure_device_copy_gbs, cached per device) against the H100's, and the
// run fuses where that predicts a gain. Where the equation and precision were not measured at
// that radius, the least speedup measured there stands for them. Fixed boundaries keep a share
// of the speedup, measured on an H200 and an H100 (their pass tests which points lie outside, and
// their single step fills no halo), likewise the least share measured at that radius (or at any)
// where it was not measured.
bool temporal_pays(Equation eq, int R, bool fp64, Boundary bc);

// One pass: reads the fields at time t from `in`, writes them at t + T dt to `out` (T =
// opt.steps, or the default), and returns T. Fields: heat {u}; wave {u(t), u(t - dt)} in, {u(t + T
// dt), u(t + (T - 1) dt)} out; Gray-Scott {U, V}. All views share one GridSpec (strides); `out`
// must not overlap `in`. Halos are never read or written (but the neighbours' planes of
// opt.z_below and z_above): periodic boundaries read wrapped interior indices, fixed ones take
// boundary_values[f] (field f's value outside the interior, at every time level). The
// coefficient table's radius must be R. Fills rec's cost model (kernel name, compulsory bytes of
// the T steps, bytes the pass moves, flops, points x T); the caller times it.
template <class T>
int launch_stencil_temporal(Equation eq, int R, const GridView<T>* in, const GridView<T>* out,
                            const StencilCoeffs<T>& coeffs, const TemporalParams<T>& params, Boundary bc,
                            const T* boundary_values, cudaStream_t s, KernelRecord& rec,
                            const TemporalOptions& opt = {});

// Sets up the kernel launch_stencil_temporal would run for these options (the shape, its shared
// memory) and launches nothing: under CUDA's lazy loading that loads its module, which the first
// pass would otherwise wait for.
template <class T>
void prepare_stencil_temporal(Equation eq, int R, const TemporalOptions& opt);

}  // namespace tiersim::cuda
