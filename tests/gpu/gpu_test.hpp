// What the GPU tests share: the skip where no GPU is usable (with the reason, so that a run
// without one says why nothing ran), and random inputs that both precisions and both backends
// read alike.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"

// In a test body: GTEST_SKIP with query_device()'s reason where no GPU is usable.
#define SKIP_WITHOUT_GPU()                                           \
  do {                                                               \
    const ::tiersim::DeviceInfo d_ = ::tiersim::query_device();      \
    if (!d_.usable) GTEST_SKIP() << "no usable GPU: " << d_.why_not; \
  } while (0)

namespace tiersim::test {

// n values uniform in [lo, hi), each representable in fp32, so that fp32 and fp64 engines and
// the CPU reference start from the same numbers.
inline std::vector<double> random_fp32_field(std::int64_t n, unsigned seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = double(float(d(rng)));
  return v;
}

// Field f of problem p at the start of a test: random, never zero, in the ranges the equation
// stays stable in (Gray-Scott u in [0.4, 1), v in [0.1, 0.5); the others [0.5, 1.5)).
inline std::vector<double> random_initial_field(const StencilProblem& p, int f, unsigned seed) {
  if (p.equation == Equation::GrayScott)
    return random_fp32_field(p.points(), seed + unsigned(f), f == 0 ? 0.4 : 0.1, f == 0 ? 1.0 : 0.5);
  return random_fp32_field(p.points(), seed + unsigned(f), 0.5, 1.5);
}

}  // namespace tiersim::test
