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
  if (!startup_parts.empty()) {
    s += "  start-up:";
    for (std::size_t i = 0; i < startup_parts.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s %s %.3f s", i ? "," : "", startup_parts[i].first.c_str(),
                    startup_parts[i].second);
      s += buf;
    }
    s += "\n";
  }
  std::snprintf(buf, sizeof buf,
                "  steady state: kernels %.3f s (%.1f%%: the steps' %.3f s%s, the diagnostics' passes %.3f s), "
                "diagnostics on the host %.3f s, output staging %.3f s, waiting for the output thread %.3f s\n",
                kernels_total(), 100 * kernel_share(), kernels_all_steps(),
                timing_every > 1 ? (" scaled from every " + std::to_string(timing_every) + "th step").c_str() : "",
                diagnostics_kernels, diagnostics, staging, writer_wait);
  s += buf;
  if (ranks > 1) {
    auto spread = [](const Spread& x) {
      char b[96];
      std::snprintf(b, sizeof b, "%.3f / %.3f / %.3f s", x.min, x.median, x.max);
      return std::string(b);
    };
    const char* how = transport == "nccl"  ? "GPU to GPU through NCCL"
                      : transport == "ipc" ? "GPU to GPU by the copy engines (CUDA IPC)"
                                           : "through host memory and MPI";
    std::snprintf(buf, sizeof buf,
                  "  %d ranks, exchanging %s (%.3g GB/s measured between neighbours): communication in rank 0's "
                  "steady state %.3f s on the steps' path (exchanges the kernels waited for) + %.3f s beside the "
                  "kernels (%s)\n",
                  ranks, how, exchange_link_gbs, communication, communication_beside,
                  communication_beside > 0 ? "on a stream of their own, beside the halo passes and the interior update"
                                           : "none overlapped");
    s += buf;
    std::snprintf(buf, sizeof buf,
                  "  min / median / max over the ranks: steady state %s, kernels %s, communication %s\n",
                  spread(rank_steady).c_str(), spread(rank_kernels).c_str(), spread(rank_communication).c_str());
    s += buf;
  }
  if (snapshots + checkpoints > 0) {
    std::snprintf(
        buf, sizeof buf,
        "  output: %d snapshots, %d checkpoints, %s written by the output thread%s in %.3f s (%.3g GB/s)%s\n",
        snapshots, checkpoints, format_bytes(bytes_written).c_str(), ranks > 1 ? "s of the ranks" : "", writer_busy,
        writer_busy > 0 ? bytes_written / writer_busy * 1e-9 : 0.0,
        writer_wait > 0.1 * steady && steady > 0
            ? (": the limit, the steps waited for it (" + std::to_string(slots) + " slots in flight, run.output_slots)")
                  .c_str()
            : ", behind the steps");
    s += buf;
  }
  return s;
}

nlohmann::ordered_json RunBreakdown::json() const {
  nlohmann::ordered_json j;
  j["total_seconds"] = total();
  j["startup_seconds"] = startup;
  nlohmann::ordered_json parts = nlohmann::ordered_json::object();
  for (const auto& [what, sec] : startup_parts) parts[what] = sec;
  j["startup_parts_seconds"] = parts;
  j["steady_seconds"] = steady;
  j["final_flush_seconds"] = final_flush;
  j["steps_per_second"] = steady > 0 ? double(steps) / steady : 0.0;
  j["kernel_seconds"] = kernels_total();
  j["step_kernel_seconds"] = kernels_all_steps();
  j["diagnostics_kernel_seconds"] = diagnostics_kernels;
  j["kernel_share_of_steady"] = kernel_share();
  j["kernels_timed_every"] = timing_every;
  j["diagnostics_seconds"] = diagnostics;
  j["staging_seconds"] = staging;
  j["writer_wait_seconds"] = writer_wait;
  j["writer_busy_seconds"] = writer_busy;
  j["host_queuing_steps_seconds"] = host_queuing;
  j["host_agreeing_to_stop_seconds"] = host_agreeing;
  j["bytes_written"] = bytes_written;
  j["snapshots"] = snapshots;
  j["checkpoints"] = checkpoints;
  j["output_slots"] = slots;
  j["ranks"] = ranks;
  j["transport"] = transport;
  j["communication_seconds"] = communication;
  j["communication_beside_kernels_seconds"] = communication_beside;
  j["exchange_link_gbs"] = exchange_link_gbs;
  auto spread = [](const Spread& x) {
    nlohmann::ordered_json o;
    o["min"] = x.min, o["median"] = x.median, o["max"] = x.max;
    o["each_rank"] = x.each;
    return o;
  };
  if (ranks > 1) {
    j["ranks_steady_seconds"] = spread(rank_steady);
    j["ranks_kernel_seconds"] = spread(rank_kernels);
    j["ranks_communication_seconds"] = spread(rank_communication);
    j["ranks_communication_beside_kernels_seconds"] = spread(rank_communication_beside);
  }
  return j;
}

}  // namespace tiersim
