// The progress line of a run: one updating line on a terminal, a plain line every few seconds
// otherwise (step, simulated time, steps/s, the conservation figure, ETA).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace tiersim {

// The rate counts the steps taken since `first` (a restart's checkpoint step), not the ones it
// started from.
class Progress {
 public:
  Progress(bool quiet, std::int64_t first, std::int64_t total);
  void update(std::int64_t step, double time, const std::pair<std::string, double>& cons, bool force = false);
  void finish();

 private:
  using clock = std::chrono::steady_clock;
  bool quiet_, tty_;
  std::int64_t first_, total_;
  clock::time_point start_ = clock::now(), last_{};
};

}  // namespace tiersim
