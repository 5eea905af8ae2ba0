// The CPU backend's ceilings, measured once per process: memory, a parallel copy over buffers far
// larger than the caches (bytes read plus bytes written, best of a few repetitions); compute,
// independent multiply-add chains in every OpenMP thread (vectorised as this build allows).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kernels/device_info.hpp"

namespace tiersim {

double measure_host_copy_gbs() {
  static const double gbs = [] {
    const std::size_t n = std::size_t(1) << 23;  // 2 x 64 MiB of doubles: far beyond the caches
    std::vector<double> a(n), b(n);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = double(i), b[i] = 0.0;  // first touch by the copying threads
    double best = 0;
    for (int rep = 0; rep < 4; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n; ++i) b[i] = a[i];
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (rep > 0) best = std::max(best, 2.0 * n * sizeof(double) / s * 1e-9);
    }
    return best;
  }();
  return gbs;
}

namespace {
template <class T>
double host_fma_gflops_now() {
  constexpr int kChains = 32;  // independent chains: several vector registers' worth
  const int iters = 1 << 18;
  const T x = T(0.999999), y = T(1e-6);
  double best = 0;
  volatile T sink = 0;  // keeps the chains from being optimised away
  for (int rep = 0; rep < 3; ++rep) {
    int threads = 1;
    const auto t0 = std::chrono::steady_clock::now();
    T total = 0;
#pragma omp parallel reduction(+ : total)
    {
#pragma omp single
      threads = omp_get_num_threads();
      T a[kChains];
      for (int k = 0; k < kChains; ++k) a[k] = T(omp_get_thread_num() + k);
      for (int i = 0; i < iters; ++i) {
#pragma omp simd
        for (int k = 0; k < kChains; ++k) a[k] = a[k] * x + y;
      }
      for (int k = 0; k < kChains; ++k) total += a[k];
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sink = sink + total;
    best = std::max(best, 2.0 * kChains * double(iters) * threads / s * 1e-9);
  }
  return best;
}
}  // namespace

double measure_host_fma_gflops(bool fp64) {
  static const double gflops[2] = {host_fma_gflops_now<float>(), host_fma_gflops_now<double>()};
  return gflops[fp64 ? 1 : 0];
}

}  // namespace tiersim
