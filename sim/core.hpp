// Basic vocabulary shared by host code, CPU kernels and CUDA kernels.
// No CUDA headers here: TIERSIM_HD expands to __host__ __device__ only under nvcc.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define TIERSIM_HD __host__ __device__
#define TIERSIM_DEVICE_CODE 1
#else
#define TIERSIM_HD
#endif

namespace tiersim {

// One error type for everything the user can cause or see; main() prints what() on one line.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
TIERSIM_HD inline Vec3<T> operator+(Vec3<T> a, Vec3<T> b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <class T>
TIERSIM_HD inline Vec3<T> operator-(Vec3<T> a, Vec3<T> b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <class T>
TIERSIM_HD inline Vec3<T> operator*(T s, Vec3<T> a) { return {s * a.x, s * a.y, s * a.z}; }
template <class T>
TIERSIM_HD inline T dot(Vec3<T> a, Vec3<T> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class T>
TIERSIM_HD inline Vec3<T> cross(Vec3<T> a, Vec3<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Strategy flags (../shared/DESIGN.md). Each has a parse and a name so that case files,
// flags, telemetry and output all spell them the same way.
enum class Backend { Auto, Cpu, Cuda };
enum class Layout { AoS, SoA, AoSoA, Float4 };
enum class Precision { Fp32, Fp64 };
enum class Tiling { None, Shared };
enum class CoeffSpace { Constant, Global };
enum class L2Persist { Off, On };

const char* name(Backend v);
const char* name(Layout v);
const char* name(Precision v);
const char* name(Tiling v);
const char* name(CoeffSpace v);
const char* name(L2Persist v);

// Parse a flag value; throws Error("<what>: unknown value 'x' (expected a|b|c)").
Backend parse_backend(const std::string& s, const std::string& what = "backend");
Layout parse_layout(const std::string& s, const std::string& what = "layout");
Precision parse_precision(const std::string& s, const std::string& what = "precision");
Tiling parse_tiling(const std::string& s, const std::string& what = "tiling");
CoeffSpace parse_coeffs(const std::string& s, const std::string& what = "coeffs");
L2Persist parse_l2_persist(const std::string& s, const std::string& what = "l2_persist");

// The run-time strategy, as one value that every kernel record carries.
struct Strategy {
  Backend backend = Backend::Cpu;
  Layout layout = Layout::SoA;
  Precision precision = Precision::Fp32;
  Tiling tiling = Tiling::Shared;
  CoeffSpace coeffs = CoeffSpace::Constant;
  L2Persist l2_persist = L2Persist::Off;
  std::size_t l2_persist_bytes = 0;  // 0: as much as the device allows
};

// Human-readable byte counts for messages ("1.61 GB").
std::string format_bytes(double bytes);

}  // namespace tiersim
