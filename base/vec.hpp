// Small vectors for particles: Vec3 for positions, velocities, accelerations; Vec4 for a
// position with its mass in one aligned vector load.
#pragma once

#include "base/hd.hpp"

namespace tiersim {

template <class T>
struct Vec3 {
  T x, y, z;
};

// 16-byte (float) or 32-byte (double) aligned so that a whole Vec4 is one vector load.
template <class T>
struct alignas(4 * sizeof(T)) Vec4 {
  T x, y, z, w;
};

template <class T>
TIERSIM_HD inline Vec3<T> operator+(Vec3<T> a, Vec3<T> b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class T>
TIERSIM_HD inline Vec3<T> operator-(Vec3<T> a, Vec3<T> b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <class T>
TIERSIM_HD inline Vec3<T> operator*(T s, Vec3<T> a) {
  return {s * a.x, s * a.y, s * a.z};
}
template <class T>
TIERSIM_HD inline T dot(Vec3<T> a, Vec3<T> b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <class T>
TIERSIM_HD inline Vec3<T> cross(Vec3<T> a, Vec3<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

}  // namespace tiersim
