// The run's telemetry: every KernelRecord (base/kernel_record.hpp) of the run, turned into GB/s,
// % of the measured copy bandwidth, GFLOP/s and work per second; the CSV and the summary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/kernel_record.hpp"

namespace tiersim {

class Telemetry {
 public:
  // peak_gbs: the copy bandwidth measured on this backend's memory at start-up.
  Telemetry(std::string backend_memory, double peak_gbs);

  void add(std::int64_t step, const KernelRecord& r);
  void add(std::int64_t step, const std::vector<KernelRecord>& rs);

  double peak_gbs() const { return peak_gbs_; }
  const std::string& peak_source() const { return peak_source_; }
  // The compute roof of the roofline: FMA throughput measured in the run's precision (GFLOP/s),
  // and what measured it. 0 when not measured.
  void set_compute_ceiling(double gflops, std::string source) {
    ceiling_gflops_ = gflops;
    ceiling_source_ = std::move(source);
  }
  double compute_ceiling_gflops() const { return ceiling_gflops_; }

  using Row = StepRecord;
  const std::vector<Row>& rows() const { return rows_; }

  // CSV with a header; the derived figures (GB/s, % of peak, GFLOP/s, work/s) are computed here.
  void write_csv(const std::string& path) const;
  // Appends the rows not yet appended (the header too when the file is new): called at every
  // snapshot, so a killed run keeps its telemetry up to the last snapshot.
  void append_csv(const std::string& path);
  // Restart: drops the rows of an existing CSV that come after last_step.
  static void truncate_csv(const std::string& path, std::int64_t last_step);

  struct Summary {
    std::string kernel, strategy, work_unit;
    std::size_t launches = 0;
    double median_ms = 0, gbs = 0, pct_peak = 0, gflops = 0, work_per_s = 0, total_ms = 0;
    double bytes_compulsory = 0, bytes_modelled = 0;
  };
  std::vector<Summary> summarize() const;
  std::string summary_table() const;  // for the terminal at the end of a run
  // The telemetry part of summary.json: the measured ceilings and one object per kernel.
  nlohmann::ordered_json summary_json() const;

 private:
  std::string peak_source_;
  double peak_gbs_;
  std::string ceiling_source_;
  double ceiling_gflops_ = 0;
  std::vector<Row> rows_;
  std::size_t csv_appended_ = 0;
  void write_rows(std::ostream& f, std::size_t from) const;
  double pct_of_ceiling(const KernelRecord& r, double gbs) const;
};

}  // namespace tiersim
