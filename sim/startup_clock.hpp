// Where a run's start-up went, part by part: each part is the time since the one before. The run
// (sim/run.cpp) keeps one, and a model keeps one over its construction (Model::startup_parts),
// which the run's takes in as its own parts.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tiersim {

using StartupParts = std::vector<std::pair<std::string, double>>;  // name, seconds, in order

class StartupClock {
 public:
  StartupClock() : mark_(std::chrono::steady_clock::now()) {}
  explicit StartupClock(std::chrono::steady_clock::time_point start) : mark_(start) {}

  // The time since the last part (or the start), as `what`.
  void part(const std::string& what) {
    const auto now = std::chrono::steady_clock::now();
    parts_.emplace_back(what, std::chrono::duration<double>(now - mark_).count());
    mark_ = now;
  }
  // The time since the last part as `rest` less the inner parts' sum (the inner clock ran within
  // it), then the inner parts.
  void part_around(const std::string& rest, const StartupParts& inner) {
    part(rest);
    double in = 0;
    for (const auto& p : inner) in += p.second;
    parts_.back().second = std::max(0.0, parts_.back().second - in);
    parts_.insert(parts_.end(), inner.begin(), inner.end());
  }
  const StartupParts& parts() const { return parts_; }

 private:
  std::chrono::steady_clock::time_point mark_;
  StartupParts parts_;
};

}  // namespace tiersim
