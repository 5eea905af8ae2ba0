#include "sim/compare.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <set>
#include <type_traits>

#include "base/comm.hpp"
#include "base/error.hpp"
#include "base/printable.hpp"
#include "base/strategy.hpp"
#include "io/safe_files.hpp"
#include "sim/case.hpp"
#include "sim/cli_checks.hpp"
#include "sim/model.hpp"
#include "sim/output_dir.hpp"
#include "sim/run.hpp"
#include "sim/stop_signal.hpp"

namespace tiersim {
namespace fs = std::filesystem;

namespace {

struct Combination {
  std::string label;                   // "layout=soa tiling=shared"
  std::vector<std::string> overrides;  // strategy.layout="soa", ...
};

// Cartesian product of the lists that were given, in the order given (first varies slowest).
std::vector<Combination> combinations(const CompareOptions& o) {
  std::vector<std::pair<std::string, const std::vector<std::string>*>> axes;
  for_each_flag([&](auto flag, auto) {
    const auto it = o.lists.find(decltype(flag)::key);
    if (it != o.lists.end()) axes.emplace_back(it->first, &it->second);
  });
  std::vector<Combination> out{{"", {}}};
  for (const auto& [axis, values] : axes) {
    if (values->empty()) continue;
    std::vector<Combination> next;
    for (const auto& c : out)
      for (const auto& v : *values) {
        Combination n = c;
        if (!n.label.empty()) n.label += ' ';
        n.label += std::string(axis) + "=" + v;
        n.overrides.push_back("strategy." + std::string(axis) + "=\"" + v + "\"");
        next.push_back(std::move(n));
      }
    out = std::move(next);
  }
  if (out.size() == 1 && out[0].label.empty()) out[0].label = "as in the case";
  return out;
}

// Refused before anything runs, in one line: a value given twice, a list of a flag that does
// not change the case's model (--layout on a stencil case, --coeffs on an N-body one), whose
// combinations would all run the same kernels under other names, and a value of the other model
// (--tiling temporal on an N-body case), whose combination could not run.
void check_lists(const CompareOptions& o, ModelMask model) {
  for_each_flag([&](auto flag, auto member) {
    using F = decltype(flag);
    using E = std::remove_cvref_t<decltype(Strategy{}.*member)>;
    const auto it = o.lists.find(F::key);
    if (it == o.lists.end() || it->second.empty()) return;
    const std::string opt = flag_option(F::key);
    if (F::models != 0 && !(F::models & model))
      throw Error(opt + ": does not change the kernels of a" + (model == kNbody ? "n N-body" : " stencil") +
                  " case (it is a flag of " + (F::models == kNbody ? "N-body" : "stencil") + " cases)");
    std::set<std::string> seen;
    for (const auto& v : it->second) {
      if (!seen.insert(v).second) throw Error(opt + ": '" + v + "' is given twice");
      if (!(value_models(parse_flag<E>(v, opt)) & model))
        throw Error(opt + ": '" + v + "' is a strategy of the " + (model == kNbody ? "stencil" : "N-body") +
                    " model; this case is run.model = \"" + (model == kNbody ? "nbody" : "stencil") + "\"");
    }
  });
}

// What a combination's kernels depend on: the backend it resolves to and every flag that changes
// them there (the strategy label), with the L2 window and the transport, which the label leaves
// out. Two combinations of one key run the same kernels (the CPU backend has no tiling,
// coefficient space or L2 window), so a compare runs them once.
std::string kernels_key(const Case& c) {
  Strategy s = strategy_from_case(c);
  s.backend = resolve_backend(s.backend);
  std::string key = strategy_label(s, model_of(c));
  if (s.backend != Backend::Cpu) key += std::string("/l2-") + name(s.l2_persist);
  return key + "/" + name(s.transport);
}

std::string dir_name(const std::string& label) {
  std::string s;
  for (char ch : label) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '=') ? ch : '_';
  std::replace(s.begin(), s.end(), '=', '-');
  return s;
}

struct KernelFigures {
  double median_ms = 0, gbs = 0, pct = 0, gflops = 0, work_per_s = 0, bytes_modelled = 0;
  std::string work_unit, variant;  // variant: the kernel's own name
  int launches = 0;
};

// The role a kernel plays, whatever variant runs it: "stencil_wave_shared_r4_by16_pf2",
// "stencil_wave_none_r4", "stencil_heat_ring_r2_..." and "stencil_heat_temporal_r1_t4" are each
// their equation's update, "nbody_forces_shared" and "nbody_forces_global" both the force
// evaluation, so that their rows share one table.
std::string kernel_role(const std::string& kernel) {
  for (const char* variant : {"_none", "_shared", "_global", "_constant", "_ring", "_tma", "_temporal"}) {
    const auto at = kernel.find(variant);
    if (at != std::string::npos) return kernel.substr(0, at);
  }
  return kernel;
}

// Figures per kernel role over the measured steps (after warm-up).
std::map<std::string, KernelFigures> figures(const Telemetry& t, int warmup) {
  std::map<std::string, std::vector<const KernelRecord*>> by;
  for (const auto& row : t.rows())
    if (row.step > warmup) by[kernel_role(row.rec.kernel)].push_back(&row.rec);
  std::map<std::string, KernelFigures> out;
  for (const auto& [k, recs] : by) {
    // Per time step: a temporal pass's time over the steps it advanced (its bytes, flops and
    // work below are the pass's, over the pass's time: bandwidth-equivalent figures).
    std::vector<double> ms;
    for (const auto* r : recs) ms.push_back(r->ms / std::max(1, r->steps));
    KernelFigures f;
    f.launches = static_cast<int>(recs.size());
    f.median_ms = median(ms);
    // The variant named: the one that advanced the most steps (under --tiling temporal the passes,
    // beside the single steps where the cadences cut a pass short).
    std::map<std::string, int> steps_by_variant;
    for (const auto* r : recs) steps_by_variant[r->kernel] += std::max(1, r->steps);
    const auto most = std::max_element(steps_by_variant.begin(), steps_by_variant.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    const KernelRecord& r =
        **std::find_if(recs.begin(), recs.end(), [&](const auto* x) { return x->kernel == most->first; });
    const double s = f.median_ms * 1e-3 * std::max(1, r.steps);
    f.gbs = s > 0 ? r.bytes_compulsory / s * 1e-9 : 0;
    f.pct = t.peak_gbs() > 0 ? 100 * f.gbs / t.peak_gbs() : 0;
    f.gflops = s > 0 ? r.flops / s * 1e-9 : 0;
    f.work_per_s = s > 0 ? r.work / s : 0;
    f.work_unit = r.work_unit;
    f.variant = r.kernel;
    f.bytes_modelled = r.bytes_modelled;
    out[k] = f;
  }
  return out;
}

std::string plot_script() {
  // The source tree's scripts/plot, or scripts/ beside a bundled bin/.
  std::vector<fs::path> candidates = {fs::path(TIERSIM_SOURCE_DIR) / "scripts" / "plot"};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "scripts" / "plot");
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c.string();
  return {};
}

// What --force may replace in an earlier compare's directory: compare.csv, compare.png and one
// figures-only run directory per combination (each a tiersim run by run_directory_names()), nothing
// else; and it is a compare's only where tiersim's lock file is there.
bool compare_file(const std::string& name) {
  for (const char* n : {"compare.csv", "compare.png", kLockName})
    if (OwnedName::exact("", n).matches(name)) return true;
  return false;
}

std::string why_not_compare_output(const fs::path& dir) {
  std::error_code ec;
  bool locked = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const PathType t = path_type(it->path().string());
    if (t == PathType::File && compare_file(name)) {
      locked = locked || name == kLockName;
      continue;
    }
    if (t != PathType::Directory) return "it holds '" + printable(name) + "', which is not tiersim compare output";
    if (fs::is_empty(it->path(), ec)) continue;
    if (const std::string why = why_not_replaceable(it->path()); !why.empty())
      return "its subdirectory '" + printable(name) + "' is not a tiersim run: " + why;
  }
  if (ec) return "cannot list it: " + ec.message();
  if (!locked) return std::string("it holds no tiersim compare (no ") + kLockName + ")";
  return "";
}

// Deletes what why_not_compare_output() allowed (the lock file stays: it is held).
void remove_compare_output(const fs::path& dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
  for (const fs::path& e : entries) {
    const std::string name = e.filename().string();
    std::error_code ec;
    if (path_type(e.string()) == PathType::Directory) {
      if (!fs::is_empty(e, ec)) {
        const RunLock lock(e.string(), false, "the compare directory was not replaced");  // no run of it goes on
        remove_run_files(e);
        fs::remove(e / kLockName, ec);
      }
      fs::remove(e, ec);
    } else if (name != kLockName) {
      fs::remove(e, ec);
    }
    if (ec) throw Error(e.string() + ": cannot remove the old output: " + ec.message());
  }
}

}  // namespace

int run_compare(const CompareOptions& o) {
  const auto combos = combinations(o);
  // The case file and the --set overrides every combination shares: refused in one line before
  // the output directory is made. (What fails for one combination alone, such as a grid too large
  // for the device in fp64, is a row "not run".)
  check_lists(o, model_of(Case::load(o.case_path, o.overrides)));
  const std::string dir = o.out_dir.empty() ? "out/compare-" + fs::path(o.case_path).stem().string() : o.out_dir;
  // Under mpirun every rank runs its part of each combination (run_case is collective); rank 0
  // makes the directories and reports.
  const bool root = comm::is_root();
  RunLock lock;
  comm::on_every_rank([&] {
    if (root) lock = prepare_out_dir(dir, o.force, why_not_compare_output, remove_compare_output);
  });

  struct Outcome {
    Combination combo;
    std::string strategy, error;
    double peak = 0;
    std::map<std::string, KernelFigures> kernels;
    std::vector<std::string> kernel_order;
    double step_ms = 0;   // every kernel of the measured steps, per step
    std::string same_as;  // not run: an earlier combination ran the same kernels (kernels_key)
  };
  std::vector<Outcome> outcomes;
  std::map<std::string, std::string> ran;  // kernels_key -> the combination that ran those kernels
  for (const auto& combo : combos) {
    if (comm::any(stop_signal() != 0)) break;  // SIGINT/SIGTERM: the combinations run so far are reported
    Outcome out{combo, "", "", 0, {}, {}, 0};
    RunOptions ro;
    ro.case_path = o.case_path;
    ro.overrides = combo.overrides;
    ro.overrides.insert(ro.overrides.end(), o.overrides.begin(), o.overrides.end());
    ro.overrides.push_back("run.steps=" + std::to_string(o.warmup + o.steps));
    ro.overrides.push_back("run.snapshot_every=0");
    ro.out_dir = (fs::path(dir) / dir_name(combo.label)).string();
    ro.force = true;
    ro.quiet = true;
    ro.silent = true;
    ro.state_output = false;  // figures only: no snapshots or checkpoints to write
    std::string key;
    try {
      key = kernels_key(Case::load(o.case_path, ro.overrides));
    } catch (const Error&) {
      // the run below refuses it, and it is reported as not run
    }
    if (const auto same = ran.find(key); !key.empty() && same != ran.end()) {
      out.same_as = same->second;
      if (key.starts_with(name(Backend::Cpu)))
        out.same_as += " (the CPU backend runs one kernel whatever the tiling, coefficients or L2 window)";
      if (root)
        std::fprintf(stderr, "compare: %s: the same kernels as %s; not run again\n", combo.label.c_str(),
                     out.same_as.c_str());
      outcomes.push_back(std::move(out));
      continue;
    }
    if (root) std::fprintf(stderr, "compare: %s ...\n", combo.label.c_str());
    try {
      RunResult r = run_case(ro);
      if (r.exit_code != 0) break;  // stopped by a signal: its figures are partial
      if (!key.empty()) ran.emplace(key, combo.label);
      out.strategy = r.strategy;
      out.peak = r.telemetry.peak_gbs();
      out.kernels = figures(r.telemetry, o.warmup);
      for (const auto& row : r.telemetry.rows())
        if (row.step > o.warmup) out.step_ms += row.rec.ms / o.steps;
      for (const auto& row : r.telemetry.rows())
        if (std::find(out.kernel_order.begin(), out.kernel_order.end(), kernel_role(row.rec.kernel)) ==
            out.kernel_order.end())
          out.kernel_order.push_back(kernel_role(row.rec.kernel));
    } catch (const Error& e) {
      out.error = e.what();  // an invalid combination is reported, not crashed on
      if (root) std::fprintf(stderr, "compare: %s: not run: %s\n", combo.label.c_str(), e.what());
    }
    outcomes.push_back(std::move(out));
  }

  const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const auto& oc) { return !oc.error.empty(); });
  const int code = stop_signal() ? 128 + stop_signal() : failed == std::ssize(outcomes) ? 1 : 0;
  if (!root) return code;

  // Per-kernel tables, and compare.csv.
  std::vector<std::string> kernels;  // in the order of their first launch
  for (const auto& oc : outcomes)
    for (const auto& k : oc.kernel_order)
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
  std::ostringstream csv;  // written whole at the end, by temp file + rename
  csv << "combination,strategy,kernel,variant,median_ms,gbs,pct_copy_bandwidth,gflops,work_per_s,work_unit,bytes_"
         "modelled,"
         "speedup,copy_bandwidth_gbs,error\n";
  std::printf("tiersim compare %s: %d measured steps after %d warm-up, per combination\n", o.case_path.c_str(), o.steps,
              o.warmup);
  for (const auto& k : kernels) {
    std::printf("\n%s\n%-44s %-34s %10s %9s %7s %9s %12s %8s\n", k.c_str(), "combination", "kernel", "median ms",
                "GB/s", "% copy", "GFLOP/s", "work/s", "speedup");
    double first_ms = 0;
    for (const auto& oc : outcomes) {
      auto it = oc.kernels.find(k);
      if (it == oc.kernels.end()) continue;
      const KernelFigures& f = it->second;
      if (first_ms == 0) first_ms = f.median_ms;
      const double speedup = f.median_ms > 0 ? first_ms / f.median_ms : 0;
      std::printf("%-44s %-34s %10.4g %9.4g %7.1f %9.4g %12.4g %7.2fx\n", oc.combo.label.c_str(), f.variant.c_str(),
                  f.median_ms, f.gbs, f.pct, f.gflops, f.work_per_s, speedup);
      char line[512];
      std::snprintf(line, sizeof line, "\"%s\",%s,%s,%s,%.6g,%.6g,%.4g,%.6g,%.6g,%s,%.0f,%.4g,%.6g,\n",
                    oc.combo.label.c_str(), oc.strategy.c_str(), k.c_str(), f.variant.c_str(), f.median_ms, f.gbs,
                    f.pct, f.gflops, f.work_per_s, f.work_unit.c_str(), f.bytes_modelled, speedup, oc.peak);
      csv << line;
    }
  }
  // The whole step: every kernel's time over the measured steps (the halo fill, the update, the
  // reductions of the diagnostics), so strategies that fuse steps or skip a pass compare fairly.
  std::printf("\nwhole step (every kernel of the %d measured steps, per step)\n%-44s %12s %12s %8s\n", o.steps,
              "combination", "ms per step", "steps/s", "speedup");
  double first_step_ms = 0;
  for (const auto& oc : outcomes) {
    if (!oc.error.empty() || oc.step_ms <= 0) continue;
    if (first_step_ms == 0) first_step_ms = oc.step_ms;
    std::printf("%-44s %12.4g %12.4g %7.2fx\n", oc.combo.label.c_str(), oc.step_ms, 1e3 / oc.step_ms,
                first_step_ms / oc.step_ms);
  }
  // A combination not run: its row in compare.csv holds the reason alone.
  auto not_run = [&](const Outcome& oc, const char* what, std::string why) {
    std::printf("\n%s: %s: %s\n", what, oc.combo.label.c_str(), why.c_str());
    std::replace(why.begin(), why.end(), '"', '\'');
    csv << "\"" << oc.combo.label << "\",,,,,,,,,,,,,\"" << why << "\"\n";
  };
  for (const auto& oc : outcomes)
    if (!oc.same_as.empty())
      not_run(oc, "not run again", "the same kernels as " + oc.same_as);
    else if (!oc.error.empty())
      not_run(oc, "not run", oc.error);
  write_file_atomically((fs::path(dir) / "compare.csv").string(), csv.str());
  std::printf("\ncompare.csv: %s\n", (fs::path(dir) / "compare.csv").c_str());
  if (o.chart) {
    const std::string script = plot_script();
    const std::string png = (fs::path(dir) / "compare.png").string();
    if (script.empty()) {
      std::printf("chart: scripts/plot not found; skipped\n");
    } else if (first_step_ms == 0) {
      std::printf("chart: not drawn (no combination ran)\n");
    } else {
      // scripts/plot's own words where it fails (its last line: a missing matplotlib, say); the
      // command is printed as the user can run it again.
      const std::string cmd = "/usr/bin/python3 '" + script + "' compare '" + (fs::path(dir) / "compare.csv").string() +
                              "' -o '" + png + "'";
      std::string said;
      int status = -1;
      if (FILE* p = ::popen((cmd + " 2>&1 >/dev/null").c_str(), "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p))
          if (buf[0] != '\n') said = buf;
        status = ::pclose(p);
      }
      if (!said.empty() && said.back() == '\n') said.pop_back();
      if (status == 0)
        std::printf("chart: %s\n", png.c_str());
      else
        std::printf("chart: not drawn (%s): %s\n", said.empty() ? "scripts/plot failed" : said.c_str(), cmd.c_str());
    }
  }
  return code;
}

void register_compare(CLI::App& app, CompareOptions& o) {
  auto* c = app.add_subcommand("compare", "Run strategy combinations side by side and compare per-kernel figures");
  c->add_option("case", o.case_path, "case file (TOML)")->required();
  // The list options take one argument per occurrence (comma-separated): otherwise a vector
  // option also swallows the case path after it (`compare --layout aos,soa cases/plummer.toml`).
  for_each_flag([&](auto flag, auto) {
    using F = decltype(flag);
    c->add_option(flag_option(F::key), o.lists[F::key],
                  std::string("list of ") + flag_choices(flag, ",") + ": " + F::help)
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(CLI::IsMember(flag_names(flag)));
  });
  c->add_option("--set", o.overrides, "override a case key for every combination (repeatable, one per --set)")
      ->take_all()
      ->allow_extra_args(false);
  c->add_option("--steps", o.steps, "measured steps per combination")->check(at_least(1));
  c->add_option("--warmup", o.warmup, "warm-up steps left out of the figures")->check(at_least(0));
  c->add_option("--out", o.out_dir, "output directory (default out/compare-<case>)")
      ->check(
          CLI::Validator([](std::string& v) { return v.empty() ? std::string("empty path") : std::string(); }, "DIR"));
  c->add_flag("--force", o.force, "replace an existing output directory");
  c->add_flag("!--no-chart", o.chart, "do not draw compare.png");
}

}  // namespace tiersim
