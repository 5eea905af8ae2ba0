// Host-callable drivers of the CUDA stencil kernels (kernels/cuda/stencil_*.cu, laid out in
// stencil_families.cuh). The engine (stencil_cuda.cu) calls these; nothing outside kernels/cuda
// and the GPU tests includes this file.
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
  std::size_t l2_bytes = 0;  // the device's L2 (stencil_shapes.cuh: some shapes depend on it)
  int cc_major = 9;          // Hopper (9) and later: bulk tensor copies and clusters
  // Grids share one GridSpec: origins of the fields the stencil reads (Eq::kFields of them), of
  // the previous level (Eq::kPreviousLevel: updated in place, out[0] == prev), of the outputs.
  GridView<T> in[Eq::kFields], out[Eq::kFields];
  const T* prev = nullptr;
  int xlimit = 0;  // pitch - xoff: a 16-byte vector starting at x < xlimit lies inside its row
  // Periodic boundaries, --tiling shared, rows of whole 32-byte sectors: the update may also
  // write each output row's x halo (the strided part of a halo fill: a sector at each end of
  // every row) from the values it stores, so that the next step's fill does the y and z faces
  // only (whole rows and planes; the y faces alone with wraps, below). kXImagesBuilt
  // (stencil_tile.cuh) says which kernels can; StencilLaunchInfo::x_images whether the launch did.
  bool images = false;
  // Periodic boundaries on a grid not split in z (--tiling shared, nz >= R): the kernel reads the
  // planes beyond the z ends from the other end itself (a wrapped plane index, one add per plane),
  // so that no fill writes the z halo planes. Only for kernels built for it
  // (StencilLaunchInfo::wraps_built, from an earlier launch); launches over part of the grid's
  // planes (z_faces, z ranges) never wrap.
  bool wraps = false;
  // Periodic boundaries (--tiling shared): the kernel reads the columns beyond the x ends from the
  // other end itself, so that neither it (images) nor the fill writes the x halos, and where it
  // can the rows beyond the y ends too. The bulk-copy ring does (narrow tensor copies of those
  // columns and rows for the tiles at the ends, stencil_ring.cuh); StencilLaunchInfo::xwraps and
  // ywraps say whether the launch did.
  bool xwraps = false;
  // > 0: only the two z faces of the grid, planes [0, z_faces) and [nz - z_faces, nz), in one
  // launch (a split step's faces, once the halos from the neighbouring ranks are in; nz > 2 z_faces).
  int z_faces = 0;
  // Set up the kernel this launch would run (its shared-memory attributes, which under CUDA's
  // lazy loading loads its module) and launch nothing: the engine does it while the run starts.
  // The info returned then has no name or bytes, but says which ends the kernel would read
  // wrapped (wraps_built, xwraps, ywraps).
  bool prepare = false;
  const StencilCoeffs<T>* coeffs_global = nullptr;  // device copy of the table
  typename Eq::template Params<T> params{};         // Eq::params<T>(constants, dt)
};

// Points of T in the 32-byte sector the update kernels write at each end of a row for the
// periodic x halo (StencilLaunch::images): the engine checks that rows hold whole sectors of them.
template <class T>
constexpr int kXHaloSectorPoints = 32 / int(sizeof(T));

struct StencilLaunchInfo {
  std::string kernel;        // e.g. "stencil_heat_shared_r4"
  double bytes_modelled;     // what the access pattern requests from L2/DRAM (reads + writes)
  bool x_images = false;     // the kernel wrote its rows' periodic x halos (StencilLaunch::images)
  bool wraps_built = false;  // the kernel can read wrapped z planes (StencilLaunch::wraps), asked or not
  bool xwraps = false;       // the kernel read the columns beyond the x ends wrapped (StencilLaunch::xwraps)
  bool ywraps = false;       // ... and the rows beyond the y ends
};

// One update of every interior point; the halos of the inputs must be filled (but the z halo
// planes where StencilLaunch::wraps).
template <class T, class Eq>
StencilLaunchInfo launch_stencil_update(const StencilLaunch<T, Eq>& l, cudaStream_t s);

// Copies the table into the __constant__ banks (one per scalar type and kernel file; the caller
// tracks owners).
template <class T>
void upload_constant_coeffs(const StencilCoeffs<T>& c, cudaStream_t s);
// Looks the banks up without writing them: under CUDA's lazy loading that loads their modules,
// which the first upload would otherwise wait for.
template <class T>
void prepare_constant_banks();

// Grids of one shape whose halos one launch fills, each with its fixed boundary's value.
template <class T>
struct HaloFill {
  static constexpr int kMaxGrids = 4;
  GridView<T> grids[kMaxGrids];
  T values[kMaxGrids];
  int count = 0;
  bool x_faces = true;  // false: the x halo of the interior rows is written already (StencilLaunch::images)
  bool y_faces = true;  // false: no x or y face at all, the z halo planes only (StencilLaunch::xwraps)
  void add(const GridView<T>& g, T value) { grids[count] = g, values[count++] = value; }
  bool full() const { return count == kMaxGrids; }
};

// Halo fill of the grids in f, in one launch (x and y faces, edges and corners included; the x
// faces of the interior rows only if f.x_faces; the z halo planes on the sides in z_sides only:
// bit 0 low, bit 1 high, StencilProblem::local_z_sides; on a grid split into z slabs the others
// come from the neighbouring ranks, kernels/halo_exchange.hpp). Periodic halos hold their images
// in the interior, fixed ones the value.
template <class T>
void launch_halo_fill(const HaloFill<T>& f, Boundary bc, cudaStream_t s, int z_sides = 3);
// Loads the fill's kernel (CUDA's lazy loading), launching nothing.
template <class T>
void prepare_halo_fill();
template <class T>
void launch_halo_fill(const GridView<T>& g, Boundary bc, T value, cudaStream_t s, int z_sides = 3) {
  HaloFill<T> f;
  f.add(g, value);
  launch_halo_fill(f, bc, s, z_sides);
}

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

// g(i, j, k) += value; images: the point's periodic halo images get the new value too (the
// halos hold the interior's images, StencilLaunch::images).
template <class T>
void launch_add_point(const GridView<T>& g, int i, int j, int k, T value, bool images, cudaStream_t s);

}  // namespace tiersim::cuda
