// What the stencil unit tests measure of a field (interior values, x fastest).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace tiersim::test {

// Mean of (-1)^(i+j+k) u: the amplitude of the grid's finest (checkerboard) mode, the one an
// explicit scheme amplifies first above its stability limit.
inline double checkerboard(const std::vector<double>& u, int nx, int ny, int nz) {
  double s = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) s += ((i + j + k) % 2 ? -1 : 1) * u[(std::size_t(k) * ny + j) * nx + i];
  return std::fabs(s) / double(std::size_t(nx) * ny * nz);
}

}  // namespace tiersim::test
