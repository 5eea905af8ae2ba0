// The benchmarks' inputs: a counter-based random generator (the same values whatever the thread
// count) and random fields that are never zero.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/counter_random.hpp"

namespace tiersim {

// Uniform in [0, 1) from index i.
inline double unit_random(std::uint64_t i) { return double(splitmix(i) >> 11) * 0x1.0p-53; }

// n values uniform in [lo, lo + span): with lo > 0 never zeros (timing on zeros flatters kernels).
inline std::vector<double> random_field(std::int64_t n, std::uint64_t seed, double lo, double span) {
  std::vector<double> v(static_cast<std::size_t>(n));
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = lo + span * unit_random(std::uint64_t(i) * 4 + seed);
  return v;
}

}  // namespace tiersim
