// Counter-based random numbers for the initial conditions and the benchmarks' inputs: draw k of item i (a body, a grid
// point) of a stream is splitmix of a key made from (seed, stream, i), plus k. An item's values depend on nothing else,
// so items are made in any order, on any number of threads or ranks, with the same values. Rejection sampling takes as
// many draws as an item needs.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "base/vec.hpp"

namespace tiersim {

// SplitMix64: value number i of a stream, independent of the order of evaluation.
inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The streams, one per population a case draws (the clusters of a collision, a galaxy's bulge and
// disk, a grid's noise and its seed cubes), so that two populations of one case are independent.
enum RandomStream : std::uint64_t {
  kPlummerStream = 1,
  kSecondClusterStream,
  kUniformStream,
  kBulgeStream,
  kDiskStream,
  kGrayScottStream,
  kGrayScottCubeStream,
  kAllenCahnStream
};

class CounterRandom {
 public:
  CounterRandom(std::uint64_t seed, RandomStream stream, std::uint64_t item)
      : key_(splitmix(splitmix(splitmix(seed) ^ stream) ^ item)) {}
  // Uniform in (0, 1): never 0 (log and negative powers stay finite) and never 1.
  double uniform() { return (double(splitmix(key_ + k_++) >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box-Muller; the second value of each pair is not kept).
  double gaussian() {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    return r * std::cos(2 * std::numbers::pi * uniform());
  }
  // Uniform on the unit sphere.
  Vec3<double> direction() {
    const double z = 2 * uniform() - 1, p = 2 * std::numbers::pi * uniform(), s = std::sqrt(1 - z * z);
    return {s * std::cos(p), s * std::sin(p), z};
  }

 private:
  std::uint64_t key_, k_ = 0;
};

}  // namespace tiersim
