#include "sim/telemetry.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/checksum.hpp"
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
  if (path_type(path) == PathType::Missing) {
    f << kCsvHeader;
    csv_bytes_ = 0;
    csv_fnv1a_ = kFnv1aStart;
  }
  write_rows(f, csv_appended_);
  const std::string text = f.str();
  // Appended in one write, to a regular file only: a link named telemetry.csv is never written through.
  append_to_file(path, text);
  csv_bytes_ += text.size();
  csv_fnv1a_ = fnv1a(text, csv_fnv1a_);
  csv_appended_ = rows_.size();
}

namespace {

constexpr std::size_t kCsvColumns = 19;

// One row of telemetry.csv back as the record it was written from (the derived columns are
// checked to be numbers and dropped); false when the line is not such a row.
bool parse_row(const std::string& line, StepRecord& out, double& peak) {
  std::vector<std::string_view> f;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    f.emplace_back(line.data() + start, (comma == std::string::npos ? line.size() : comma) - start);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (f.size() != kCsvColumns) return false;
  auto number = [](std::string_view t, auto& v) {
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return !t.empty() && ec == std::errc() && p == t.data() + t.size();
  };
  double ignored = 0;
  int l2 = 0;
  KernelRecord& r = out.rec;
  if (!number(f[0], out.step) || f[1].empty() || !number(f[3], r.ms) || !number(f[4], r.bytes_compulsory) ||
      !number(f[5], r.bytes_modelled) || !number(f[6], ignored) || !number(f[7], ignored) || !number(f[8], ignored) ||
      !number(f[9], r.flops) || !number(f[10], ignored) || !number(f[11], r.work) || !number(f[13], ignored) ||
      !number(f[14], l2) || (l2 != 0 && l2 != 1) || !number(f[15], r.l2_window_bytes) ||
      !number(f[16], r.l2_hit_ratio) || !number(f[17], peak) || !number(f[18], ignored))
    return false;
  r.kernel = f[1];
  r.strategy = f[2];
  r.work_unit = f[12];
  r.l2_window = l2 == 1;
  r.step = out.step;
  return true;
}

}  // namespace

Telemetry::CsvPart Telemetry::read_csv_part(const std::string& path, std::uint64_t bytes, std::uint64_t want_fnv1a,
                                            std::int64_t step) {
  const std::string refused = "; not continuing the run (nothing was changed)";
  CsvPart part;
  part.fnv1a = want_fnv1a;
  switch (path_type(path)) {
    case PathType::File:
      break;
    case PathType::Missing:
      if (bytes == 0) return part;
      throw Error(path + ": missing; the run had written " + std::to_string(bytes) + " bytes of it by step " +
                  std::to_string(step) + refused);
    case PathType::Link:
      throw Error(path + ": is a symbolic link; a run's files are never links" + refused);
    default:
      throw Error(path + ": not a regular file" + refused);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read" + refused);
  std::string line;
  std::uint64_t offset = 0;
  for (long lineno = 1; std::getline(in, line); ++lineno) {
    const bool complete = !in.eof();  // a last line without its newline was cut short
    const std::uint64_t end = offset + line.size() + (complete ? 1 : 0);
    const bool recorded = end <= bytes;
    if (!complete) {
      // After the recorded part: a row torn by a kill, dropped. Within it: the file is cut short
      // (or its last newline damaged), which the checks below name.
      if (recorded) part.text.append(line), offset = end;
      break;
    }
    if (recorded) part.text.append(line).append("\n");
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (lineno == 1) {
      if (line + "\n" != kCsvHeader)
        throw Error(where + "not tiersim's telemetry header " + quoted_excerpt(line) + refused);
    } else {
      StepRecord row;
      double peak = 0;
      if (!parse_row(line, row, peak)) throw Error(where + "not a telemetry row " + quoted_excerpt(line) + refused);
      if (recorded) {
        if (row.step > step)
          throw Error(where + "step " + std::to_string(row.step) + ", after the checkpoint's step " +
                      std::to_string(step) + refused);
        part.peak_gbs = peak;
        part.rows.push_back(std::move(row));
      }
    }
    offset = end;
  }
  if (offset < bytes)
    throw Error(path + ": " + std::to_string(offset) + " bytes, fewer than the " + std::to_string(bytes) +
                " the run had written by step " + std::to_string(step) + " (cut short?)" + refused);
  if (part.text.size() != bytes)
    throw Error(path + ": its first " + std::to_string(bytes) +
                " bytes do not end at the end of a line (changed or damaged)" + refused);
  if (fnv1a(part.text) != want_fnv1a)
    throw Error(path + ": its first " + std::to_string(bytes) + " bytes are not those the run wrote by step " +
                std::to_string(step) + " (changed or damaged)" + refused);
  return part;
}

void Telemetry::resume_csv(const std::string& path, const CsvPart& part) {
  write_file_atomically(path, part.text);
  csv_bytes_ = part.text.size();
  csv_fnv1a_ = part.fnv1a;
  csv_appended_ = rows_.size();
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
