#include "sim/run_breakdown.hpp"

#include <cstdio>

#include "base/error.hpp"

namespace tiersim {

std::string RunBreakdown::text(const std::string& verb, const std::string& conservation) const {
  char buf[768];
  std::string s;
  const double rate = steady > 0 ? double(steps) / steady : 0;
  std::snprintf(buf, sizeof buf, "%s %lld steps in %.3f s wall: %.4g steps/s in the steady state%s%s\n", verb.c_str(),
                static_cast<long long>(steps), total(), rate, conservation.empty() ? "" : ", ", conservation.c_str());
  s += buf;
  std::snprintf(buf, sizeof buf, "  wall: start-up %.3f s + steady state %.3f s + final flush %.3f s\n", startup,
                steady, final_flush);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  steady state: kernels %.3f s (%.1f%%%s), diagnostics %.3f s, output staging %.3f s, waiting "
                "for the output thread %.3f s\n",
                kernels_all_steps(), 100 * kernel_share(),
                timing_every > 1 ? (", scaled from every " + std::to_string(timing_every) + "th step").c_str() : "",
                diagnostics, staging, writer_wait);
  s += buf;
  if (snapshots + checkpoints > 0) {
    std::snprintf(buf, sizeof buf,
                  "  output: %d snapshots, %d checkpoints, %s written by the output thread in %.3f s (%.3g GB/s)%s\n",
                  snapshots, checkpoints, format_bytes(bytes_written).c_str(), writer_busy,
                  writer_busy > 0 ? bytes_written / writer_busy * 1e-9 : 0.0,
                  writer_wait > 0.1 * steady && steady > 0
                      ? (": the limit, the steps waited for it (" + std::to_string(slots) +
                         " slots in flight, run.output_slots)").c_str()
                      : ", behind the steps");
    s += buf;
  }
  return s;
}

std::string RunBreakdown::json() const {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"total_seconds\": %.6g, \"startup_seconds\": %.6g, \"steady_seconds\": %.6g, "
                "\"final_flush_seconds\": %.6g, \"steps_per_second\": %.6g, \"kernel_seconds\": %.6g, "
                "\"kernel_share_of_steady\": %.6g, \"kernels_timed_every\": %lld, \"diagnostics_seconds\": %.6g, "
                "\"staging_seconds\": %.6g, \"writer_wait_seconds\": %.6g, \"writer_busy_seconds\": %.6g, "
                "\"bytes_written\": %.0f, \"snapshots\": %d, \"checkpoints\": %d, \"output_slots\": %d}",
                total(), startup, steady, final_flush, steady > 0 ? double(steps) / steady : 0.0, kernels_all_steps(),
                kernel_share(), static_cast<long long>(timing_every), diagnostics, staging, writer_wait, writer_busy,
                bytes_written, snapshots, checkpoints, slots);
  return buf;
}

}  // namespace tiersim
