// The discrete Laplacian, written once: its coefficient table, its spectral radius (which the
// equations' stability limits take) and its value at one point. The CPU reference and every CUDA
// variant call laplacian<R>; the variants differ only in where the neighbour values come from
// (global memory, shared memory, registers), which they pass in as an accessor. The equations
// built on it are in kernels/physics/equations/ (the list: kernels/physics/equations.hpp).
#pragma once

#include <cmath>
#include <string>

#include "layouts/grid.hpp"
#include "base/hd.hpp"
#include "base/error.hpp"

namespace tiersim {

// Central-difference weights of d2/dx2 of order 2R on unit spacing: w[0] at the centre, w[k]
// at offsets +k and -k. Derived, not typed in: they are the solution of the moment conditions
//   sum_k w_k * 2 k^(2m) / (2m)! = [m == 1]   for m = 1..R
// (the even Taylor terms up to order 2R of f(k) + f(-k) must add up to f''), with
// w[0] = -2 sum_k w_k so that constants have zero Laplacian.
inline void second_derivative_weights(int R, double w[kMaxRadius + 1]) {
  if (R < 1 || R > kMaxRadius) throw Error("stencil radius must be 1.." + std::to_string(kMaxRadius));
  long double a[kMaxRadius][kMaxRadius + 1];
  for (int m = 1; m <= R; ++m) {
    long double fact = 1;
    for (int q = 2; q <= 2 * m; ++q) fact *= q;
    for (int k = 1; k <= R; ++k) a[m - 1][k - 1] = 2.0L * std::pow((long double)k, 2 * m) / fact;
    a[m - 1][R] = m == 1 ? 1.0L : 0.0L;
  }
  for (int c = 0; c < R; ++c) {  // Gaussian elimination with partial pivoting
    int p = c;
    for (int q = c + 1; q < R; ++q)
      if (std::fabs(a[q][c]) > std::fabs(a[p][c])) p = q;
    for (int q = 0; q <= R; ++q) std::swap(a[c][q], a[p][q]);
    for (int q = 0; q < R; ++q) {
      if (q == c) continue;
      const long double f = a[q][c] / a[c][c];
      for (int s = c; s <= R; ++s) a[q][s] -= f * a[c][s];
    }
  }
  long double sum = 0;
  for (int k = 1; k <= R; ++k) {
    const long double wk = a[k - 1][R] / a[k - 1][k - 1];
    w[k] = double(wk);
    sum += wk;
  }
  w[0] = double(-2 * sum);
  for (int k = R + 1; k <= kMaxRadius; ++k) w[k] = 0;
}

// The coefficient table the kernels read (from __constant__ or global memory on the GPU):
// the Laplacian with per-axis spacing, centre weight summed over the three axes.
template <class T>
struct StencilCoeffs {
  int radius = 1;
  T center = 0;
  T x[kMaxRadius] = {}, y[kMaxRadius] = {}, z[kMaxRadius] = {};
};

template <class T>
StencilCoeffs<T> make_laplacian_coeffs(int R, double hx, double hy, double hz) {
  double w[kMaxRadius + 1];
  second_derivative_weights(R, w);
  const double ix = 1 / (hx * hx), iy = 1 / (hy * hy), iz = 1 / (hz * hz);
  StencilCoeffs<T> c;
  c.radius = R;
  c.center = T(w[0] * (ix + iy + iz));
  for (int k = 1; k <= R; ++k) {
    c.x[k - 1] = T(w[k] * ix);
    c.y[k - 1] = T(w[k] * iy);
    c.z[k - 1] = T(w[k] * iz);
  }
  return c;
}

// Largest magnitude of the discrete Laplacian's eigenvalues (at the Nyquist mode on every
// axis): sum over axes of |w0 + 2 sum_k w_k (-1)^k| / h^2.
inline double laplacian_spectral_radius(int R, double hx, double hy, double hz) {
  double w[kMaxRadius + 1];
  second_derivative_weights(R, w);
  double s = w[0];
  for (int k = 1; k <= R; ++k) s += 2 * w[k] * (k % 2 ? -1.0 : 1.0);
  return std::fabs(s) * (1 / (hx * hx) + 1 / (hy * hy) + 1 / (hz * hz));
}

// The Laplacian at one point. at(axis, offset) returns the neighbour at that offset along
// that axis (offset in -R..R, never 0); u0 is the centre value.
TIERSIM_NO_HD_CHECK
template <int R, class T, class At>
TIERSIM_HD inline T laplacian(const StencilCoeffs<T>& c, T u0, const At& at) {
  T acc = c.center * u0;
  TIERSIM_UNROLL
  for (int k = 1; k <= R; ++k) {
    acc += c.x[k - 1] * (at(0, -k) + at(0, k));
    acc += c.y[k - 1] * (at(1, -k) + at(1, k));
    acc += c.z[k - 1] * (at(2, -k) + at(2, k));
  }
  return acc;
}

// Flops per point of the Laplacian: 1 for the centre, 3 per axis and offset k (add the pair, multiply-add).
inline double laplacian_flops(int R) { return 1 + 9.0 * R; }

}  // namespace tiersim
