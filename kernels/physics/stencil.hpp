// Stencil physics, written once: the Laplacian coefficient table, the point updates of the
// three equations and their explicit stability limits. The CPU reference and every CUDA
// variant call these functions; the variants differ only in where the neighbour values come
// from (global memory, shared memory, registers), which they pass in as an accessor.
#pragma once

#include <cmath>
#include <string>

#include "layouts/grid.hpp"
#include "base/hd.hpp"
#include "base/error.hpp"

namespace tiersim {

enum class Equation { Heat, Wave, GrayScott };
inline const char* name(Equation e) {
  return e == Equation::Heat ? "heat" : e == Equation::Wave ? "wave" : "gray-scott";
}
inline Equation parse_equation(const std::string& s) {
  if (s == "heat") return Equation::Heat;
  if (s == "wave") return Equation::Wave;
  if (s == "gray-scott") return Equation::GrayScott;
  throw Error("stencil.equation: unknown value '" + s + "' (expected heat|wave|gray-scott)");
}

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

// Explicit stability limits. Heat (forward Euler): dt * D * rho <= 2. Wave (leapfrog):
// c^2 dt^2 rho <= 4.
inline double heat_dt_limit(double rho, double diffusivity) { return 2.0 / (diffusivity * rho); }
inline double wave_dt_limit(double rho, double speed) { return 2.0 / (speed * std::sqrt(rho)); }

// Gray-Scott (forward Euler), reaction included. Frozen at a state (u, v), on a Laplacian mode of
// eigenvalue -lambda (0 <= lambda <= rho), the linearised system is
//   [[-Du lambda - v^2 - F,  -2 u v              ],
//    [ v^2,                  -Dv lambda + 2 u v - F - k]].
// The off-diagonal product -2 u v^3 is <= 0, so the eigenvalues mu are real and lie between the
// diagonal entries, or complex with the entries' mean as real part (and |Im mu|^2 <= 2 u v^3).
// Assuming u, v in [0, 1] (where the equations keep them), every Re mu >= -M with
//   M = max(Du rho + 1 + F, Dv rho + F + k),
// and dt <= 2 / M keeps |1 + dt Re mu| <= 1 on every decaying mode: the stiff diffusive modes are
// damped, not flipped and amplified (the imaginary part adds only dt^2 |Im mu|^2 <= 2 dt^2 to
// |1 + dt mu|^2, second order as with any explicit scheme). The bound is attained at
// (u, v) = (0, 1), where the matrix is triangular; in spots and stripes v stays below ~0.5 and the
// sharp limit there is up to ~1.4x higher (0.68 against 0.92-1.0 at the defaults, R = 1, h = 1).
// Diffusion alone (2 / (max(Du, Dv) rho) = 1.04 there) lets the U checkerboard grow inside spots.
inline double gray_scott_dt_limit(double rho, double du, double dv, double feed, double kill) {
  return 2.0 / std::fmax(du * rho + 1 + feed, dv * rho + feed + kill);
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

// Point updates. Parameters are pre-multiplied by dt where that saves work per point.
template <class T>
struct HeatParams {
  T dt_diffusivity;  // dt * D
};
template <class T>
TIERSIM_HD inline T heat_update(T u, T lap, const HeatParams<T>& p) {
  return u + p.dt_diffusivity * lap;  // forward Euler
}

template <class T>
struct WaveParams {
  T c2dt2;  // (c dt)^2
};
// Leapfrog: u(t+dt) = 2 u(t) - u(t-dt) + (c dt)^2 lap u(t).
template <class T>
TIERSIM_HD inline T wave_update(T u, T u_prev, T lap, const WaveParams<T>& p) {
  return (u + u - u_prev) + p.c2dt2 * lap;
}

template <class T>
struct GrayScottParams {
  T dt, du, dv, feed, kill;
};
// du/dt = Du lap u - u v^2 + F (1 - u);  dv/dt = Dv lap v + u v^2 - (F + k) v.
template <class T>
TIERSIM_HD inline void gray_scott_update(T u, T v, T lap_u, T lap_v, const GrayScottParams<T>& p, T& u_new,
                                         T& v_new) {
  const T uvv = u * v * v;
  u_new = u + p.dt * (p.du * lap_u - uvv + p.feed * (T(1) - u));
  v_new = v + p.dt * (p.dv * lap_v + uvv - (p.feed + p.kill) * v);
}

// Ricker wavelet (Mexican hat) of peak frequency f, centred at t0.
TIERSIM_HD inline double ricker(double t, double f, double t0) {
  const double a = 3.14159265358979323846 * f * (t - t0);
  const double a2 = a * a;
  return (1 - 2 * a2) * std::exp(-a2);
}

// Flops per point of the Laplacian (2 per neighbour pair term and centre) and of each update.
inline double laplacian_flops(int R) { return 1 + 9.0 * R; }

}  // namespace tiersim
