// The CUDA halo fill (kernels/cuda/stencil_fields.cu) against the host fill (layouts/grid.hpp,
// three ordered passes): every element of the allocation, bit for bit, on odd sizes (rows that
// are not whole sectors), R = 1..4, fp32 and fp64, periodic and fixed boundaries, each z side
// alone, both and neither, with and without the x faces of the interior rows (which the updates
// write themselves where they can), and several grids in one launch (each with its own fixed value).
// Interiors are random, halos and row padding start as NaN on both sides: a halo point not
// written stays NaN, padding written by mistake no longer is.
// Skipped, with the reason, where no GPU is usable.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "layouts/grid.hpp"

#if TIERSIM_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/stencil_kernels.cuh"
#endif

using namespace tiersim;

namespace {

#if !TIERSIM_HAVE_CUDA

TEST(HaloFillGpu, NeedsCuda) { GTEST_SKIP() << "built without CUDA: no GPU halo fill"; }

#else

template <class T>
void check_fill(int nx, int ny, int nz, int r, Boundary bc, int z_sides, int grids, bool x_faces = true) {
  const GridSpec<T> spec = GridSpec<T>::make(nx, ny, nz, r);
  std::mt19937 rng(unsigned(nx * 7919 + r * 31 + z_sides * 3 + grids));
  std::uniform_real_distribution<double> d(0.5, 1.5);
  std::vector<std::vector<T> > host(grids);
  std::vector<cuda::DeviceBuffer> dev(grids);
  cuda::HaloFill<T> fill;
  fill.x_faces = x_faces;
  for (int g = 0; g < grids; ++g) {
    host[g].assign(spec.elements(), std::numeric_limits<T>::quiet_NaN());
    const GridView<T> hv = spec.view(host[g].data());
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) hv(i, j, k) = T(d(rng));
    dev[g].allocate(spec.bytes(), "halo fill test grid");
    TIERSIM_CUDA_CHECK(cudaMemcpy(dev[g].data(), host[g].data(), spec.bytes(), cudaMemcpyHostToDevice), "upload");
    const T value = T(0.25 + 0.125 * g);
    fill.add(spec.view(dev[g].as<T>()), value);
    // The host reference: the x and y passes, and the z pass on the sides asked for.
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side)
        if (axis < 2 || (z_sides >> side & 1)) fill_halo_box(hv, axis, halo_box(axis, side, nx, ny, nz, r), bc, value);
    // Without the x faces: those of the interior rows keep what they held (the poison).
    if (!x_faces)
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
          for (int t = 0; t < r; ++t) hv(-1 - t, j, k) = hv(nx + t, j, k) = std::numeric_limits<T>::quiet_NaN();
  }
  cuda::launch_halo_fill(fill, bc, nullptr, z_sides);
  TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), "halo fill");
  const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                           " R=" + std::to_string(r) + (bc == Boundary::Fixed ? " fixed" : " periodic") +
                           " z_sides=" + std::to_string(z_sides) + " grids=" + std::to_string(grids) +
                           (sizeof(T) == 8 ? " fp64" : " fp32") + (x_faces ? "" : " without x faces");
  for (int g = 0; g < grids; ++g) {
    std::vector<T> got(spec.elements());
    TIERSIM_CUDA_CHECK(cudaMemcpy(got.data(), dev[g].data(), spec.bytes(), cudaMemcpyDeviceToHost), "download");
    std::size_t differ = 0, first = 0;
    for (std::size_t e = 0; e < got.size(); ++e)
      if (std::memcmp(&got[e], &host[g][e], sizeof(T)) != 0 && differ++ == 0) first = e;
    EXPECT_EQ(differ, 0u) << what << ", grid " << g << ": first differing element " << first << " got " << got[first]
                          << ", expected " << host[g][first];
  }
}

TEST(HaloFillGpu, EveryHaloElementAsTheHostFillWritesIt) {
  const DeviceInfo info = query_device();
  if (!info.usable) GTEST_SKIP() << "no usable GPU: " << info.why_not;
  for (int r = 1; r <= 4; ++r)
    for (Boundary bc : {Boundary::Periodic, Boundary::Fixed})
      for (int z_sides : {3, 1, 2, 0}) {
        check_fill<float>(37, 29, 23, r, bc, z_sides, 1);
        check_fill<double>(37, 29, 23, r, bc, z_sides, 1);
        check_fill<float>(37, 29, 23, r, bc, z_sides, 1, false);
      }
  // Several grids in one launch, and planes wider than a block's points.
  for (int grids : {2, 4}) {
    check_fill<float>(67, 41, 9, 3, Boundary::Fixed, 3, grids);
    check_fill<float>(67, 41, 9, 3, Boundary::Periodic, 3, grids);
  }
  check_fill<float>(131, 97, 5, 4, Boundary::Periodic, 3, 1);
  check_fill<double>(5, 4, 4, 4, Boundary::Periodic, 3, 1);  // extents equal to or near R
}

#endif

}  // namespace
