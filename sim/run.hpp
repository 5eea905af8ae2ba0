// The time loop behind `tiersim run`: case -> model -> steps, with diagnostics, snapshots,
// telemetry and progress at their cadences.
#pragma once

#include <string>
#include <vector>

namespace tiersim {

struct RunOptions {
  std::string case_path;
  std::vector<std::string> overrides;  // "section.key=value": flags first, then --set
  std::string out_dir;                 // empty: out/<case name>
  bool force = false;                  // replace an existing output directory
  bool quiet = false;
  std::vector<std::string> formats{"xdmf"};
};

// Returns the process exit code; throws Error for bad input.
int run_case(const RunOptions& o);

}  // namespace tiersim
