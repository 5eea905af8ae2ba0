#include "sim/counter_log.hpp"

#include <cstdio>
#include <sstream>

#include "io/safe_files.hpp"

namespace tiersim {

void CounterLog::add(std::int64_t step, const std::vector<KernelRecord>& recs, const std::vector<KernelCounters>& hw) {
  std::ostringstream f;
  if (path_type(path_) == PathType::Missing)
    f << "step,kernel,cuda_functions,launches,strategy,bytes_compulsory,bytes_modelled,dram_read_bytes,"
         "dram_write_bytes,dram_bytes,modelled_over_dram,l2_hit_rate,duration_ms\n";
  // One telemetry record can cover several CUDA launches (a halo fill launches one kernel per
  // axis): consecutive launches of the same function form a group, and groups pair with the
  // records in launch order. Where the two still do not line up, launches are listed alone.
  struct Group {
    std::string function;
    int launches = 0;
    double rd = 0, wr = 0, hit_weighted = 0, ms = 0;
  };
  std::vector<Group> groups;
  for (const auto& k : hw) {
    if (groups.empty() || groups.back().function != k.kernel) groups.push_back({k.kernel});
    Group& g = groups.back();
    ++g.launches;
    g.rd += k.dram_read_bytes, g.wr += k.dram_write_bytes, g.ms += k.duration_ms;
    g.hit_weighted += k.l2_hit_rate * k.duration_ms;
  }
  if (groups.size() != recs.size()) {
    groups.clear();
    for (const auto& k : hw)
      groups.push_back(
          {k.kernel, 1, k.dram_read_bytes, k.dram_write_bytes, k.l2_hit_rate * k.duration_ms, k.duration_ms});
    if (!warned_)
      std::fprintf(stderr,
                   "tiersim: counters: %zu launches profiled for %zu telemetry records at step %lld: "
                   "listed unpaired\n",
                   hw.size(), recs.size(), (long long)step);
    warned_ = true;
  }
  char buf[1024];
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    const KernelRecord* r = groups.size() == recs.size() ? &recs[i] : nullptr;
    const double dram = g.rd + g.wr, hit = g.ms > 0 ? g.hit_weighted / g.ms : 0;
    std::string fn = g.function;
    for (char& ch : fn)
      if (ch == ',' || ch == '"') ch = ';';
    std::snprintf(buf, sizeof buf, "%lld,%s,\"%s\",%d,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.4f,%.4f,%.6g\n", (long long)step,
                  r ? r->kernel.c_str() : "", fn.c_str(), g.launches, r ? r->strategy.c_str() : "",
                  r ? r->bytes_compulsory : 0.0, r ? r->bytes_modelled : 0.0, g.rd, g.wr, dram,
                  r && dram > 0 ? r->bytes_modelled / dram : 0.0, hit, g.ms);
    f << buf;
    if (r) rows_.push_back({r->kernel, r->bytes_compulsory, r->bytes_modelled, dram, hit});
  }
  append_to_file(path_, f.str());  // to a regular file only, never through a link
}

std::string CounterLog::table() const {
  std::string out = "hardware counters: kernel, compulsory MB, modelled MB, DRAM MB (CUPTI), modelled/DRAM, L2 hit\n";
  char buf[256];
  for (const auto& r : rows_) {
    std::snprintf(buf, sizeof buf, "  %-34s %10.2f %10.2f %10.2f %8.3f %7.1f%%\n", r.kernel.c_str(), r.compulsory / 1e6,
                  r.modelled / 1e6, r.dram / 1e6, r.dram > 0 ? r.modelled / r.dram : 0.0, 100 * r.l2_hit);
    out += buf;
  }
  return out;
}

}  // namespace tiersim
