// 3D grids with a halo of radius r (1..4) on every side, x fastest. Every interior row starts
// on a 128-byte boundary (a warp's 32 floats are one aligned line), which the CUDA kernels'
// 16-byte vector loads rely on. A GridView is a pointer to interior point (0,0,0) plus
// strides, so the same view indexes host memory (CPU backend, output) and device memory
// (CUDA kernels), and negative indices reach into the halo.
//
// The halo is filled in three passes (x faces over interior rows, y faces over full-width
// rows, z faces over full planes), so edges and corners come out right too: a star stencil
// does not read them, but a particle-mesh deposit would. On a grid split into z slabs the z pass is
// replaced by the neighbours' planes (kernels/halo_exchange.hpp); the CUDA engine sends them before
// its x and y passes, so their x and y halos there are a step old (no star stencil reads them).
// HaloBox names the boxes of those passes once for host and device code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "base/host_memory.hpp"

#include "base/hd.hpp"
#include "base/error.hpp"

namespace tiersim {

inline constexpr int kMaxRadius = 4;
inline constexpr std::size_t kRowAlignBytes = 128;

enum class Boundary { Periodic, Fixed };

template <class T>
struct GridView {
  using scalar = T;
  T* origin = nullptr;  // interior point (0,0,0)
  int nx = 0, ny = 0, nz = 0, r = 0;
  std::ptrdiff_t sy = 0, sz = 0;  // element strides of y (the padded row pitch) and z

  TIERSIM_HD std::ptrdiff_t offset(int i, int j, int k) const { return i + j * sy + k * sz; }
  TIERSIM_HD T& operator()(int i, int j, int k) const { return origin[offset(i, j, k)]; }
  TIERSIM_HD T* row(int j, int k) const { return origin + j * sy + k * sz; }
  TIERSIM_HD std::int64_t interior_points() const { return std::int64_t(nx) * ny * nz; }
  TIERSIM_HD operator GridView<const T>() const { return {origin, nx, ny, nz, r, sy, sz}; }
};

// Planes [k0, k0 + n) of g as a grid of their own: the planes around them (up to r each side) are
// its z halo, so a kernel given it updates those planes alone, reading the same neighbours.
template <class T>
TIERSIM_HD GridView<T> z_range(const GridView<T>& g, int k0, int n) {
  return {g.origin + k0 * g.sz, g.nx, g.ny, n, g.r, g.sy, g.sz};
}

// Where a grid of nx*ny*nz interior points with halo r sits in one allocation of
// elements() scalars. xoff: elements before interior x = 0 in each row (a multiple of the
// 128-byte line, >= r); pitch: elements per row (a multiple of the line, >= xoff + nx + r).
template <class T>
struct GridSpec {
  static constexpr int kLine = int(kRowAlignBytes / sizeof(T));
  int nx = 0, ny = 0, nz = 0, r = 0;
  int xoff = 0;
  std::ptrdiff_t pitch = 0;

  static GridSpec make(int nx, int ny, int nz, int r) {
    if (nx < 1 || ny < 1 || nz < 1) throw Error("grid: every extent must be at least 1");
    if (r < 1 || r > kMaxRadius) throw Error("grid: halo radius must be 1.." + std::to_string(kMaxRadius));
    GridSpec g;
    g.nx = nx, g.ny = ny, g.nz = nz, g.r = r;
    g.xoff = int(align_elems(r));
    g.pitch = std::ptrdiff_t(align_elems(std::size_t(g.xoff) + nx + r));
    return g;
  }
  static std::size_t align_elems(std::size_t e) { return (e + kLine - 1) / kLine * kLine; }

  std::ptrdiff_t plane() const { return pitch * (ny + 2 * r); }
  std::size_t elements() const { return std::size_t(plane()) * std::size_t(nz + 2 * r); }
  std::size_t bytes() const { return elements() * sizeof(T); }
  std::ptrdiff_t origin_offset() const { return xoff + r * pitch + r * plane(); }
  // Where plane k (-r..nz+r-1, halo planes included) starts: plane() elements from there are the
  // whole plane, its x and y halos and row padding included, so n planes are one run of memory.
  std::ptrdiff_t plane_start(int k) const { return std::ptrdiff_t(k + r) * plane(); }
  // base must be 128-byte aligned (cudaMalloc gives 256; HostGrid allocates aligned).
  GridView<T> view(T* base) const { return {base + origin_offset(), nx, ny, nz, r, pitch, plane()}; }
};

// Interior planes [first, first + count) of src (the whole interior, x fastest) into `planes`,
// which holds those planes whole as the grid lays them out (from plane_start(first) on),
// converting the scalar type; halos and padding are left as they are. On the OpenMP threads where
// the including file is built with OpenMP.
template <class T, class U>
void set_interior_planes(const GridSpec<T>& g, T* planes, int first, int count, const U* src) {
  const std::ptrdiff_t row0 = g.xoff + std::ptrdiff_t(g.r) * g.pitch;
#ifdef _OPENMP
#pragma omp parallel for collapse(2) schedule(static)
#endif
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < g.ny; ++j) {
      T* const row = planes + k * g.plane() + row0 + j * g.pitch;
      const U* const s = src + (std::size_t(first + k) * std::size_t(g.ny) + std::size_t(j)) * std::size_t(g.nx);
      for (int i = 0; i < g.nx; ++i) row[i] = T(s[i]);
    }
}

// Host storage of one grid, aligned, zero-filled (padding included, so nothing uninitialised
// ever reaches a snapshot or a comparison). The zeros and the interior copies go plane by plane
// on the OpenMP threads where the including file is built with OpenMP: a 512^3 grid in double is
// a gigabyte, whose (huge) pages the threads then first touch side by side (base/host_array.hpp).
template <class T>
class HostGrid {
 public:
  HostGrid() = default;
  HostGrid(int nx, int ny, int nz, int r) : spec_(GridSpec<T>::make(nx, ny, nz, r)) {
    const std::size_t bytes = (spec_.bytes() + kRowAlignBytes - 1) / kRowAlignBytes * kRowAlignBytes;
    // Checked before allocating: Linux overcommits, so a huge grid would otherwise die later.
    check_host_memory(double(bytes), "a " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                                         " grid with halo " + std::to_string(r));
    void* p = allocate_large(bytes);  // aligned to 4 KB at least, and on huge pages from 2 MB
    if (!p) throw Error("grid: cannot allocate " + format_bytes(double(bytes)) + " of host memory");
    data_.reset(static_cast<T*>(p));
    const std::size_t plane = std::size_t(spec_.plane()) * sizeof(T);
    const int planes = spec_.nz + 2 * spec_.r;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int k = 0; k < planes; ++k) std::memset(static_cast<char*>(p) + std::size_t(k) * plane, 0, plane);
    std::memset(static_cast<char*>(p) + std::size_t(planes) * plane, 0, bytes - std::size_t(planes) * plane);
  }
  const GridSpec<T>& spec() const { return spec_; }
  GridView<T> view() const { return spec_.view(data_.get()); }
  T* data() const { return data_.get(); }

  // Interior (x fastest, nx*ny*nz values) in and out, converting the scalar type.
  template <class U>
  void set_interior(const U* src) const {
    set_interior_planes(spec_, data_.get() + spec_.plane_start(0), 0, spec_.nz, src);
  }
  template <class U>
  void get_interior(U* dst) const {
    const GridView<T> v = view();
#ifdef _OPENMP
#pragma omp parallel for collapse(2) schedule(static)
#endif
    for (int k = 0; k < v.nz; ++k)
      for (int j = 0; j < v.ny; ++j) {
        const T* row = v.row(j, k);
        U* d = dst + (std::size_t(k) * v.ny + j) * v.nx;
        for (int i = 0; i < v.nx; ++i) d[i] = U(row[i]);
      }
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  GridSpec<T> spec_{};
  std::unique_ptr<T[], Free> data_;
};

// One box of a halo-fill pass: axis 0, 1, 2 in this order; side 0 = low, 1 = high.
// lo/hi are inclusive-exclusive index ranges (halo indices are negative or >= n).
struct HaloBox {
  int lo[3], hi[3];
  TIERSIM_HD std::int64_t points() const { return std::int64_t(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

// Pass `axis` covers the full extent (halo included) of the axes already done and the
// interior of the axes still to do.
TIERSIM_HD inline HaloBox halo_box(int axis, int side, int nx, int ny, int nz, int r) {
  const int n[3] = {nx, ny, nz};
  HaloBox b{};
  for (int a = 0; a < 3; ++a) {
    if (a < axis)
      b.lo[a] = -r, b.hi[a] = n[a] + r;
    else
      b.lo[a] = 0, b.hi[a] = n[a];
  }
  b.lo[axis] = side == 0 ? -r : n[axis];
  b.hi[axis] = side == 0 ? 0 : n[axis] + r;
  return b;
}

// Periodic image of a halo index (valid for r <= n, which the model checks).
TIERSIM_HD inline int periodic_index(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// What halo index i (of an axis of n points) holds on the host: the value at its interior image
// (periodic), or -1 for the boundary value (fixed). Interior indices are themselves.
inline int halo_image(int i, int n, Boundary bc) {
  if (i >= 0 && i < n) return i;
  return bc == Boundary::Fixed ? -1 : periodic_index(i, n);
}

// Host halo fill, serial over one box (the CPU backend runs the boxes of a pass in parallel).
template <class T>
void fill_halo_box(const GridView<T>& g, int axis, const HaloBox& b, Boundary bc, T value) {
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        int s[3] = {i, j, k};
        s[axis] = halo_image(s[axis], n[axis], bc);
        g(i, j, k) = s[axis] < 0 ? value : g(s[0], s[1], s[2]);
      }
}

template <class T>
void fill_halo_host(const GridView<T>& g, Boundary bc, T value) {
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) fill_halo_box(g, axis, halo_box(axis, side, g.nx, g.ny, g.nz, g.r), bc, value);
}

// Halo points of one grid that a fill writes: the x and y passes, and the z pass on the sides in
// z_sides (bit 0: low, bit 1: high; both unless a z face comes from another rank).
inline std::int64_t halo_points(int nx, int ny, int nz, int r, int z_sides = 3) {
  const std::int64_t plane = (std::int64_t(nx) + 2 * r) * (ny + 2 * r);
  const int sides = (z_sides & 1) + (z_sides >> 1 & 1);
  return plane * nz - std::int64_t(nx) * ny * nz + sides * plane * r;
}

}  // namespace tiersim
