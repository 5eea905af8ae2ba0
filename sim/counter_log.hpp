// counters.csv: for one profiled step every N (--counters N, CUDA), the hardware counters of each
// kernel launch beside the telemetry's cost model of the same launch (matched in launch order).
// The step's event timings are not kept: under CUPTI's kernel replay they time the replays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/kernel_record.hpp"
#include "kernels/hw_counters.hpp"

namespace tiersim {

class CounterLog {
 public:
  explicit CounterLog(std::string path) : path_(std::move(path)) {}
  // Appends the profiled step's rows (and the header, to a new file).
  void add(std::int64_t step, const std::vector<KernelRecord>& recs, const std::vector<KernelCounters>& hw);
  // Per kernel: modelled bytes against the DRAM bytes the counters saw (last profiled step).
  std::string table() const;

 private:
  struct Row {
    std::string kernel;
    double compulsory, modelled, dram, l2_hit;
  };
  std::string path_;
  bool warned_ = false;
  std::vector<Row> rows_;
};

}  // namespace tiersim
