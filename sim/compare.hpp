// `tiersim compare CASE`: runs every combination of the strategy lists for a few steps after a
// warm-up and prints, per kernel, median time, GB/s, % of the copy bandwidth and the speedup
// against the first combination; writes compare.csv and (with matplotlib) compare.png.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tiersim {

struct CompareOptions {
  std::string case_path;
  // Per strategy flag (its key, e.g. "layout"), the values to compare (empty: as in the case).
  std::map<std::string, std::vector<std::string>> lists;
  std::vector<std::string> overrides;  // --set
  int steps = 10;                      // measured steps per combination
  int warmup = 3;                      // steps run first and left out of the figures
  std::string out_dir;                 // default out/compare-<case>
  bool force = false;
  bool chart = true;
};

int run_compare(const CompareOptions& o);
void register_compare(CLI::App& app, CompareOptions& o);

}  // namespace tiersim
