// Where a run's wall time went: the closing lines of `tiersim run` and the "wall" object of
// summary.json. Phases are host-clock time on the loop's thread; kernels are the sum of the
// timed launches, which run on the device while the host does the rest, so their share of the
// steady state is the figure that says whether the run is as fast as its kernels.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tiersim {

struct RunBreakdown {
  double startup = 0;  // case, model, initial state and first upload, bandwidth figures, output set up
  std::vector<std::pair<std::string, double>> startup_parts;  // where start-up went, in order (seconds)
  double steady = 0;                                          // from the first step to the last
  double final_flush = 0;          // after the last step: the output thread drains, telemetry, summary
  double kernels = 0;              // timed launches of the steady state's steps, seconds
  double diagnostics_kernels = 0;  // the diagnostics' passes on the device (KernelRecord::diagnostics)
  std::int64_t timing_every = 1;   // run.telemetry_every: kernels were timed on every N-th step only
  double diagnostics = 0;          // host time of diagnostics and non-finite checks (queueing, reading the results)
  double staging = 0;              // staging output: copies issued (GPU) or made (CPU)
  double writer_wait = 0;          // the loop waited for a free output slot
  double writer_busy = 0;          // the output thread writing files, behind the steps
  // Host time of the steady state in queuing the steps (launches, exchanges posted) and, under
  // several ranks, in agreeing once a step whether to stop: where the GPU idles, these say
  // whether the host kept it waiting (summary.json only).
  double host_queuing = 0, host_agreeing = 0;
  double bytes_written = 0;
  int snapshots = 0, checkpoints = 0, slots = 0;
  std::int64_t steps = 0;
  // Several ranks (base/comm.hpp): this rank's communication (records marked
  // KernelRecord::communication; not part of `kernels`): on the steps' path (exchanges the next
  // kernel waits for in order, and the waits of the kernels for an exchange that ran beside them),
  // and beside the kernels (exchanges on a stream of their own, overlapped with the interior
  // update), and each figure's spread over the ranks.
  int ranks = 1;
  std::string transport = "none";  // Flag<Transport> name; "none" on one rank, which exchanges nothing
  double communication = 0;
  double communication_beside = 0;
  double exchange_link_gbs = 0;  // between neighbouring ranks (GPU to GPU or host to host), measured at start-up
  struct Spread {
    double min = 0, median = 0, max = 0;
    std::vector<double> each;  // every rank's, in rank order
  };
  Spread rank_steady, rank_kernels, rank_communication, rank_communication_beside;

  double total() const { return startup + steady + final_flush; }
  // Kernel time of every step of the steady state (scaled up from the timed steps when only
  // every N-th was timed; said so in the text).
  double kernels_all_steps() const { return kernels * double(timing_every < 1 ? 1 : timing_every); }
  // The steps' kernels and the diagnostics' passes: every launch of the steady state.
  double kernels_total() const { return kernels_all_steps() + diagnostics_kernels; }
  double kernel_share() const { return steady > 0 ? kernels_total() / steady : 0; }
  // The lines printed after the summary table; `verb` is "finished" or "stopped after".
  std::string text(const std::string& verb, const std::string& conservation) const;
  // summary.json's "wall".
  nlohmann::ordered_json json() const;
};

}  // namespace tiersim
