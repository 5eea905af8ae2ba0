// The CPU backend's memory ceiling: a parallel copy over buffers far larger than the caches,
// counting bytes read plus bytes written, best of a few repetitions. Measured once per process.
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

}  // namespace tiersim
