// Host-callable drivers of the CUDA stencil kernels (kernels/cuda/stencil_*.cu, laid out in
// stencil_families.cuh). The engine (stencil_cuda.cu) calls these; nothing outside kernels/cuda
// includes this file.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kernels/stencil_engine.hpp"

namespace tiersim::cuda {

// One update of equation Eq (kernels/physics/equations.hpp) in scalar type T.
template <class T, class Eq>
struct StencilLaunch {
  int radius = 1;
  Tiling tiling = Tiling::Shared;
  CoeffSpace coeffs = CoeffSpace::Constant;
  StencilTuning tuning;
  int sm_count = 132;
  int cc_major = 9;  // Hopper (9) and later: bulk tensor copies and clusters
  // Grids share one GridSpec: origins of the fields the stencil reads (Eq::kFields of them), of
  // the previous level (Eq::kPreviousLevel: updated in place, out[0] == prev), of the outputs.
  GridView<T> in[Eq::kFields], out[Eq::kFields];
  const T* prev = nullptr;
  int xlimit = 0;  // pitch - xoff: a 16-byte vector starting at x < xlimit lies inside its row
  const StencilCoeffs<T>* coeffs_global = nullptr;  // device copy of the table
  typename Eq::template Params<T> params{};         // Eq::params<T>(constants, dt)
};

struct StencilLaunchInfo {
  std::string kernel;     // e.g. "stencil_heat_shared_r4"
  double bytes_modelled;  // what the access pattern requests from L2/DRAM (reads + writes)
};

// One update of every interior point; the halos of the inputs must be filled.
template <class T, class Eq>
StencilLaunchInfo launch_stencil_update(const StencilLaunch<T, Eq>& l, cudaStream_t s);

// Copies the table into the __constant__ banks (one per scalar type and kernel file; the caller
// tracks owners).
template <class T>
void upload_constant_coeffs(const StencilCoeffs<T>& c, cudaStream_t s);

// Halo fill of one grid (three passes: x, y, z faces; edges and corners included). The z pass
// fills the sides in z_sides only (bit 0: low, bit 1: high; StencilProblem::local_z_sides): on a
// grid split into z slabs the others come from the neighbouring ranks (kernels/halo_exchange.hpp).
template <class T>
void launch_halo_fill(const GridView<T>& g, Boundary bc, T value, cudaStream_t s, int z_sides = 3);

// Per-block partials of the interior's statistics (FieldStats), kFieldStatsPartials doubles per
// block: sum, sum of squares, min, max, the count of non-finite values and the smallest linear
// interior index of one ((k * ny + j) * nx + i, exact in a double; 1e308: none). Returns the
// number of blocks.
constexpr int kFieldStatsPartials = 6;
template <class T>
int launch_field_stats(const GridView<T>& g, double* partials, int max_blocks, cudaStream_t s);

// Per-block partial sums of the leapfrog energy density (see StencilEngine::wave_energy): one
// double per block.
template <class T>
int launch_wave_energy(const GridView<T>& u, const GridView<T>& prev, const StencilCoeffs<T>* coeffs_global, double c2,
                       double inv_dt, double* partials, int max_blocks, cudaStream_t s);

template <class T>
void launch_add_point(const GridView<T>& g, int i, int j, int k, T value, cudaStream_t s);

}  // namespace tiersim::cuda
