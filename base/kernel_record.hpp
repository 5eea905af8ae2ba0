// What every kernel launch reports: the code that launches a kernel knows its cost model
// (bytes, flops, work items); the backend adds the elapsed time (host clock for CPU kernels,
// CUDA events for device kernels); the application's telemetry turns them into GB/s, % of the
// measured copy bandwidth, GFLOP/s and interactions/s or points/s.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tiersim {

struct KernelRecord {
  std::string kernel;           // e.g. "nbody_forces_tiled"
  std::int64_t step = -1;       // the step that launched it (-1: whichever step takes the record)
  std::string strategy;         // e.g. "cuda/soa/fp32/shared"
  double ms = 0;                // elapsed time of this launch
  double bytes_compulsory = 0;  // each input read once, each output written once
  double bytes_modelled = 0;    // what this access pattern actually requests from DRAM (model)
  double flops = 0;
  double work = 0;         // interactions (nbody forces) or points (stencils, kick, drift)
  int steps = 1;           // time steps this launch advances (a temporal pass: several; work counts them all)
  std::string work_unit;   // "interactions", "points", "bodies"
  bool l2_window = false;  // an L2 access-policy window was active for this launch
  double l2_window_bytes = 0;
  double l2_hit_ratio = 0;
  // The bandwidth "% of ceiling" compares with: 0, the copy bandwidth measured at start-up; a
  // positive figure, another measured link (device-to-host copies: the pinned link); negative,
  // none (file writes).
  double ceiling_gbs = 0;
  // An exchange between the ranks of a run (halo planes, body positions), not a kernel: the run
  // counts its time as communication and rates it against the link measured between the ranks.
  bool communication = false;
  // Ran on a stream of its own beside the kernels (the halo exchange beside the interior update):
  // its time is not on the step's path; what the kernels waited for it is a record of its own
  // (communication, not overlapped).
  bool overlapped = false;
  // A pass of the diagnostics (statistics, energies), not of a step: timed on every diagnostics
  // step whatever run.telemetry_every says, and counted as it is (never scaled up to every step).
  bool diagnostics = false;
};

// A record with the step it belongs to: one row of telemetry.
struct StepRecord {
  std::int64_t step;
  KernelRecord rec;
};

// Median of a sample (the figure every timing summary reports).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace tiersim
