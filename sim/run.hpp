// The time loop behind `tiersim run`: case -> model -> steps, with diagnostics, snapshots,
// telemetry and progress at their cadences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/telemetry.hpp"

namespace tiersim {

struct RunOptions {
  std::string case_path;
  std::string restart_dir;             // continue the run in this directory from its checkpoint
  std::vector<std::string> overrides;  // "section.key=value": flags first, then --set
  std::string out_dir;                 // empty: out/<case name>
  bool force = false;                  // replace an existing output directory
  bool quiet = false;                  // no progress line, banner or summary table
  bool silent = false;                 // not even the closing "output:" line (tiersim compare)
  bool state_output = true;            // snapshots and checkpoints (tiersim compare needs neither)
  std::string formats = "xdmf";        // --format: xdmf, vtk or xdmf,vtk
  bool remeasure_bandwidth = false;    // measure the copy bandwidth again instead of the cached figure
  int counters_every = 0;              // --counters N: hardware counters for one step every N (CUDA)
};

struct RunResult {
  int exit_code = 0;  // 0, or 128 + signal when stopped by SIGINT/SIGTERM
  std::string out_dir;
  std::string strategy;  // as the model names it, e.g. "cuda/soa/fp32/shared"
  std::int64_t steps = 0;
  double wall_seconds = 0;
  Telemetry telemetry{"", 0};
};

// Runs a case to the end; throws Error for bad input (before anything is written).
RunResult run_case(const RunOptions& o);

}  // namespace tiersim
