// Softened Newtonian gravity and the leapfrog integrator, written once for the CPU backend and
// every CUDA variant (AMReX *_K.H style). Units: G = 1 unless the case sets it (folded into
// the masses' use in the kick, see NbodyParams::G).
#pragma once

#include <cmath>

#include "base/hd.hpp"
#include "base/vec.hpp"

namespace tiersim {

// 1/sqrt(v). On the GPU, fp32: one MUFU.RSQ. fp64: CUDA's rsqrt(double) is a long software
// sequence, so an fp32 MUFU.RSQ seed y0 (relative error d < 2^-21) is refined by one
// third-order Newton step, y = y0 (1 + e/2 + 3e^2/8) with e = 1 - v y0^2, leaving O(d^3) ~ 1e-19:
// rounding-limited. Valid for v in the fp32 normal range (1.2e-38 .. 3.4e38), i.e. separations
// 1e-19 .. 1.8e19 in the case's units; below it the seed is clamped, which keeps the self-term
// (dx = 0) finite and so zero.
template <class T>
TIERSIM_HD inline T rsqrt_hd(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    return rsqrtf(v);
  } else {
    const float vf = fmaxf(__double2float_rn(v), 1.17549435e-38f);
    const double y = double(rsqrtf(vf));
    const double e = fma(-(v * y), y, 1.0);
    return fma(y * e, fma(0.375, e, 0.5), y);
  }
#else
  return T(1) / std::sqrt(v);
#endif
}

// Fused multiply-add on the GPU. On the host a plain a * b + c: std::fma is a slow library call
// on CPUs built for baseline x86-64, and the compiler contracts a * b + c into an FMA where the
// target has one.
template <class T>
TIERSIM_HD inline T fma_hd(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
  return fma(a, b, c);
#else
  return a * b + c;
#endif
}

// Acceleration on body i (position ri) from body j (position + mass in rj_m), softening folded
// into the FMA chain: r2 = dx*dx + (dy*dy + (dz*dz + eps2)). With eps2 > 0 the self-interaction
// contributes exactly zero (dx = dy = dz = 0), so loops need no i != j branch.
template <class T>
TIERSIM_HD inline void accumulate_pair(Vec3<T> ri, Vec4<T> rj_m, T eps2, Vec3<T>& acc) {
  const T dx = rj_m.x - ri.x, dy = rj_m.y - ri.y, dz = rj_m.z - ri.z;
  const T r2 = fma_hd(dx, dx, fma_hd(dy, dy, fma_hd(dz, dz, eps2)));
  const T inv = rsqrt_hd(r2);
  const T s = rj_m.w * inv * inv * inv;
  acc.x = fma_hd(dx, s, acc.x);
  acc.y = fma_hd(dy, s, acc.y);
  acc.z = fma_hd(dz, s, acc.z);
}

// accumulate_pair, and also m_j / sqrt(r2 + eps2): the force forms that product first anyway
// (s = ((m_j inv) inv) inv), so the caller gets the pair's potential for one add. The operations
// on acc are accumulate_pair's, in the same order: the accelerations are the same bit for bit.
template <class T>
TIERSIM_HD inline T accumulate_pair_potential(Vec3<T> ri, Vec4<T> rj_m, T eps2, Vec3<T>& acc) {
  const T dx = rj_m.x - ri.x, dy = rj_m.y - ri.y, dz = rj_m.z - ri.z;
  const T r2 = fma_hd(dx, dx, fma_hd(dy, dy, fma_hd(dz, dz, eps2)));
  const T inv = rsqrt_hd(r2);
  const T m_inv = rj_m.w * inv;
  const T s = m_inv * inv * inv;
  acc.x = fma_hd(dx, s, acc.x);
  acc.y = fma_hd(dy, s, acc.y);
  acc.z = fma_hd(dz, s, acc.z);
  return m_inv;
}

// The eps^2 the force loops use. A softening of 0 (exact Kepler orbits) becomes 1e-20, far
// below any separation that matters, so that the self-interaction still contributes exactly
// 0 * finite = 0 and no loop needs an i != j branch (1e-20 and its rsqrt^3 stay normal in fp32).
inline double force_eps2(double softening) {
  const double e2 = softening * softening;
  return e2 > 1e-20 ? e2 : 1e-20;
}

// Potential at i from j: -m_j / sqrt(r2 + eps2). The self term (r = 0) is excluded by the
// caller, since with softening it is -m/eps, not zero.
template <class T>
TIERSIM_HD inline T pair_potential(Vec3<T> ri, Vec4<T> rj_m, T eps2) {
  const T dx = rj_m.x - ri.x, dy = rj_m.y - ri.y, dz = rj_m.z - ri.z;
  return -rj_m.w * rsqrt_hd(fma_hd(dx, dx, fma_hd(dy, dy, fma_hd(dz, dz, eps2))));
}

// Flops counted per interaction in every report (the conventional figure, as in the CUDA samples).
inline constexpr double kFlopsPerInteraction = 20.0;
// Flops per pair term of a potential-only pass: 3 differences, 3 FMAs (6), the reciprocal square
// root (1), the product with the mass (1) and the sum (1). A force pass that also sums the
// potential adds 1 per term (the sum; the product is the force's).
inline constexpr double kPotentialFlopsPerPair = 12.0;

// Leapfrog kick-drift-kick, per body.
template <class T>
TIERSIM_HD inline Vec3<T> kick(Vec3<T> v, Vec3<T> a, T half_dt_G) {
  return {fma_hd(a.x, half_dt_G, v.x), fma_hd(a.y, half_dt_G, v.y), fma_hd(a.z, half_dt_G, v.z)};
}
template <class T>
TIERSIM_HD inline Vec3<T> drift(Vec3<T> p, Vec3<T> v, T dt) {
  return {fma_hd(v.x, dt, p.x), fma_hd(v.y, dt, p.y), fma_hd(v.z, dt, p.z)};
}

}  // namespace tiersim
