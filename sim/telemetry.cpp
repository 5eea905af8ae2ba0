#include "sim/telemetry.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/printable.hpp"
#include "io/safe_files.hpp"

namespace tiersim {

Telemetry::Telemetry(std::string backend_memory, double peak_gbs)
    : peak_source_(std::move(backend_memory)), peak_gbs_(peak_gbs) {}

void Telemetry::add(std::int64_t step, const KernelRecord& r) { rows_.push_back({step, r}); }
void Telemetry::add(std::int64_t step, const std::vector<KernelRecord>& rs) {
  for (const auto& r : rs) add(step, r);
}

namespace {
double per_s(double amount, double ms) { return ms > 0 ? amount / (ms * 1e-3) : 0.0; }
}  // namespace

double Telemetry::pct_of_ceiling(const KernelRecord& r, double gbs) const {
  const double ceiling = r.ceiling_gbs > 0 ? r.ceiling_gbs : r.ceiling_gbs < 0 ? 0 : peak_gbs_;
  return ceiling > 0 ? 100.0 * gbs / ceiling : 0.0;
}

namespace {
const char* kCsvHeader =
    "step,kernel,strategy,ms,bytes_compulsory,bytes_modelled,gbs_compulsory,gbs_modelled,"
    "pct_copy_bandwidth,flops,gflops,work,work_unit,work_per_s,l2_window,l2_window_bytes,"
    "l2_hit_ratio,copy_bandwidth_gbs,compute_ceiling_gflops\n";
}  // namespace

void Telemetry::write_rows(std::ostream& f, std::size_t from) const {
  char buf[512];
  for (std::size_t i = from; i < rows_.size(); ++i) {
    const auto& [step, r] = rows_[i];
    const double gbs = per_s(r.bytes_compulsory, r.ms) * 1e-9;
    std::snprintf(buf, sizeof buf,
                  "%lld,%s,%s,%.6g,%.0f,%.0f,%.6g,%.6g,%.4g,%.6g,%.6g,%.6g,%s,%.6g,%d,%.0f,%.3g,%.6g,%.6g\n",
                  static_cast<long long>(step), r.kernel.c_str(), r.strategy.c_str(), r.ms, r.bytes_compulsory,
                  r.bytes_modelled, gbs, per_s(r.bytes_modelled, r.ms) * 1e-9, pct_of_ceiling(r, gbs), r.flops,
                  per_s(r.flops, r.ms) * 1e-9, r.work, r.work_unit.c_str(), per_s(r.work, r.ms), r.l2_window ? 1 : 0,
                  r.l2_window_bytes, r.l2_hit_ratio, peak_gbs_, ceiling_gflops_);
    f << buf;
  }
}

void Telemetry::write_csv(const std::string& path) const {
  std::ostringstream f;
  f << kCsvHeader;
  write_rows(f, 0);
  write_file_atomically(path, f.str());
}

void Telemetry::append_csv(const std::string& path) {
  std::ostringstream f;
  if (path_type(path) == PathType::Missing) f << kCsvHeader;
  write_rows(f, csv_appended_);
  // Appended in one write, to a regular file only: a link named telemetry.csv is never written through.
  append_to_file(path, f.str());
  csv_appended_ = rows_.size();
}

void Telemetry::truncate_csv(const std::string& path, std::int64_t last_step) {
  switch (path_type(path)) {
    case PathType::Missing:
      return;
    case PathType::File:
      break;
    case PathType::Link:
      throw Error(path + ": is a symbolic link; a run's files are never links (not continuing it)");
    default:
      throw Error(path + ": not a regular file (not continuing the run)");
  }
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read");
  std::string kept, line;
  std::ptrdiff_t commas = -1;  // the header's
  for (long lineno = 1; std::getline(in, line); ++lineno) {
    if (commas < 0) {
      kept += line + "\n";
      commas = std::count(line.begin(), line.end(), ',');
      continue;
    }
    // A torn last line (killed mid-write) has fewer fields than the header and is dropped.
    if (std::count(line.begin(), line.end(), ',') != commas) continue;
    const std::string field = line.substr(0, line.find(','));
    std::int64_t step = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), step);
    if (ec != std::errc() || end != field.data() + field.size())
      throw Error(path + ":" + std::to_string(lineno) + ": step '" + printable(field, 40) +
                  "' is not an integer (a damaged telemetry file: repair or remove it to restart)");
    if (step <= last_step) kept += line + "\n";
  }
  in.close();
  write_file_atomically(path, kept);
}

std::vector<Telemetry::Summary> Telemetry::summarize() const {
  std::vector<Summary> out;
  std::map<std::string, std::vector<const KernelRecord*>> by_kernel;
  std::vector<std::string> order;
  for (const auto& row : rows_) {
    const std::string key = row.rec.kernel + "\t" + row.rec.strategy;
    if (!by_kernel.count(key)) order.push_back(key);
    by_kernel[key].push_back(&row.rec);
  }
  for (const auto& key : order) {
    const auto& recs = by_kernel[key];
    Summary s;
    s.kernel = recs.front()->kernel;
    s.strategy = recs.front()->strategy;
    s.work_unit = recs.front()->work_unit;
    s.launches = recs.size();
    std::vector<double> ms;
    for (const auto* r : recs) {
      ms.push_back(r->ms);
      s.total_ms += r->ms;
    }
    s.median_ms = median(ms);
    // Per-launch cost models are identical for a kernel and strategy; use the first.
    s.bytes_compulsory = recs.front()->bytes_compulsory;
    s.bytes_modelled = recs.front()->bytes_modelled;
    s.gbs = per_s(s.bytes_compulsory, s.median_ms) * 1e-9;
    s.pct_peak = pct_of_ceiling(*recs.front(), s.gbs);
    s.gflops = per_s(recs.front()->flops, s.median_ms) * 1e-9;
    s.work_per_s = per_s(recs.front()->work, s.median_ms);
    out.push_back(s);
  }
  return out;
}

std::string Telemetry::summary_table() const {
  std::ostringstream os;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-22s %-28s %8s %11s %9s %7s %9s %14s\n", "kernel", "strategy", "launches",
                "median ms", "GB/s", "% copy", "GFLOP/s", "work/s");
  os << buf;
  for (const auto& s : summarize()) {
    std::snprintf(buf, sizeof buf, "%-22s %-28s %8zu %11.4g %9.4g %7.1f %9.4g %10.3e %s\n", s.kernel.c_str(),
                  s.strategy.c_str(), s.launches, s.median_ms, s.gbs, s.pct_peak, s.gflops, s.work_per_s,
                  s.work_unit.c_str());
    os << buf;
  }
  std::snprintf(buf, sizeof buf,
                "(GB/s counts compulsory bytes; %% copy is against %.4g GB/s measured on %s; device-to-host copies "
                "against the pinned link)\n",
                peak_gbs_, peak_source_.c_str());
  os << buf;
  if (ceiling_gflops_ > 0) {
    std::snprintf(buf, sizeof buf, "(compute ceiling: %.4g GFLOP/s measured by %s)\n", ceiling_gflops_,
                  ceiling_source_.c_str());
    os << buf;
  }
  return os.str();
}

nlohmann::ordered_json Telemetry::summary_json() const {
  nlohmann::ordered_json j;
  j["copy_bandwidth_gbs"] = peak_gbs_;
  j["copy_bandwidth_source"] = peak_source_;
  j["compute_ceiling_gflops"] = ceiling_gflops_;
  j["compute_ceiling_source"] = ceiling_source_;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const auto& s : summarize())
    kernels.push_back({{"kernel", s.kernel},
                       {"strategy", s.strategy},
                       {"launches", s.launches},
                       {"median_ms", s.median_ms},
                       {"total_ms", s.total_ms},
                       {"bytes_compulsory", s.bytes_compulsory},
                       {"bytes_modelled", s.bytes_modelled},
                       {"gbs", s.gbs},
                       {"pct_copy_bandwidth", s.pct_peak},
                       {"gflops", s.gflops},
                       {"work_per_s", s.work_per_s},
                       {"work_unit", s.work_unit}});
  j["kernels"] = std::move(kernels);
  return j;
}

}  // namespace tiersim
