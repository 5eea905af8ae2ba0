// Neumaier's compensated sum: the rounding error of each addition is carried apart and added at
// the end, so a sum of many terms in double loses no digits that fp64 results need (a plain
// running sum of N terms can be off by about N x 1.1e-16 relative).
#pragma once

#include <cmath>

namespace tiersim {

struct CompensatedSum {
  double s = 0, c = 0;
  void add(double x) {
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

}  // namespace tiersim
