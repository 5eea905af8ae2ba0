#include "sim/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace tiersim {

Progress::Progress(bool quiet, std::int64_t first, std::int64_t total)
    : quiet_(quiet), tty_(isatty(STDERR_FILENO)), first_(first), total_(total) {}

void Progress::update(std::int64_t step, double time, const std::pair<std::string, double>& cons, bool force) {
  if (quiet_) return;
  const auto now = clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (!force && since < (tty_ ? 0.1 : 5.0)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? double(step - first_) / elapsed : 0;
  const double eta = rate > 0 ? (total_ - step) / rate : 0;
  std::fprintf(stderr, "%sstep %lld/%lld  t=%.5g  %.3g steps/s  %s=%+.3e  ETA %.0fs%s", tty_ ? "\r" : "",
               static_cast<long long>(step), static_cast<long long>(total_), time, rate, cons.first.c_str(),
               cons.second, eta, tty_ ? "   " : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (!quiet_ && tty_) std::fprintf(stderr, "\n");
}

}  // namespace tiersim
