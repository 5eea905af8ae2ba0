#include "sim/run.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/checkpoint.hpp"
#include "io/snapshots.hpp"
#include "io/xdmf.hpp"
#include "kernels/device_info.hpp"
#include "kernels/hw_counters.hpp"
#include "kernels/kernel_timing.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"
#include "sim/telemetry.hpp"
#include "base/trace.hpp"

namespace tiersim {
namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// One updating line on a terminal; a plain line every few seconds otherwise. The rate counts the
// steps taken since `first` (a restart's checkpoint step), not the ones it started from.
class Progress {
 public:
  Progress(bool quiet, std::int64_t first, std::int64_t total)
      : quiet_(quiet), tty_(isatty(STDERR_FILENO)), first_(first), total_(total) {}
  void update(std::int64_t step, double time, const std::pair<std::string, double>& cons, bool force = false) {
    if (quiet_) return;
    const auto now = clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? double(step - first_) / elapsed : 0;
    const double eta = rate > 0 ? (total_ - step) / rate : 0;
    std::fprintf(stderr, "%sstep %lld/%lld  t=%.5g  %.3g steps/s  %s=%+.3e  ETA %.0fs%s", tty_ ? "\r" : "",
                 static_cast<long long>(step), static_cast<long long>(total_), time, rate, cons.first.c_str(),
                 cons.second, eta, tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (!quiet_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  using clock = std::chrono::steady_clock;
  bool quiet_, tty_;
  std::int64_t first_, total_;
  clock::time_point start_ = clock::now(), last_{};
};

std::string default_out_dir(const std::string& case_path) {
  return (fs::path("out") / fs::path(case_path).stem()).string();
}

}  // namespace

// What `tiersim run` writes into its output directory, and what tiersim's scripts add there
// (scripts/render: frames/, scripts/plot telemetry: *.png), each also as a killed write's .tmp.
bool is_tiersim_output(std::string name) {
  static const char* const kNames[] = {"snapshots.h5",  "snapshots.xmf", "snapshots.d", "checkpoint.h5",
                                       "case.toml",     "telemetry.csv", "summary.json", "counters.csv",
                                       "particles.pvd", "fields.pvd",    "vtk",          ".tiersim-write-test",
                                       "frames",        "bandwidth.png", "roofline.png"};
  if (name.ends_with(".tmp")) name.resize(name.size() - 4);
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// Why --force may not replace the non-empty directory `dir` (empty: it may). Only a tiersim run
// holding nothing else is replaced: its snapshots.h5 names tiersim as its H5MD creator (or, for a
// run killed before its first index, it has snapshots.d/), and every entry is a name tiersim
// writes. So `--out . --force` in a source tree, or `--out ~ --force`, deletes nothing.
std::string why_not_replaceable(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_tiersim_output(name)) return "it holds '" + name + "', which is not tiersim output";
  }
  if (ec) return "cannot list it: " + ec.message();
  const fs::path h5 = dir / "snapshots.h5";
  if (fs::exists(h5, ec)) {
    try {
      read_run_info(h5.string());  // throws unless /h5md/creator is tiersim
    } catch (const Error&) {
      return "its snapshots.h5 was not written by tiersim";
    }
    return "";
  }
  if (fs::is_directory(dir / "snapshots.d", ec)) return "";
  return "it holds no snapshots.h5 written by tiersim";
}

void prepare_out_dir(const std::string& dir, bool force, const std::function<std::string(const fs::path&)>& why_not) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(dir + ": output path exists and is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force) throw Error(dir + ": output directory exists and is not empty (use --force to replace it)");
      const std::string why = why_not(dir);
      if (!why.empty())
        throw Error(dir + ": not replaced: --force replaces only an empty directory or a tiersim run, and " + why);
      // Entry by entry: the directory itself stays (it may be the working directory).
      std::vector<fs::path> entries;
      for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
      for (const auto& e : entries) {
        fs::remove_all(e, ec);
        if (ec) throw Error(e.string() + ": cannot remove the old output: " + ec.message());
      }
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  const std::string probe = (fs::path(dir) / ".tiersim-write-test").string();
  if (!std::ofstream(probe)) throw Error(dir + ": output directory is not writable");
  fs::remove(probe, ec);
}

namespace {

std::string observables_text(const Observables& obs) {
  std::string s;
  for (const auto& [k, v] : obs)
    if (!std::isfinite(v)) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// Where the state holds a NaN or infinity: the first bad index of each array and the kernel
// that writes it, else the diagnostics (`hint`) that are not finite; empty when all is finite.
std::string non_finite_values(Model& model, const std::string& hint) {
  const auto bad = model.find_non_finite();
  if (bad.empty() && hint.empty()) return "";
  std::string where;
  for (const auto& b : bad)
    where += (where.empty() ? "" : ", ") + b.array + "[" + std::to_string(b.index) + "] (kernel " + b.kernel + ")";
  if (bad.empty()) where = "the diagnostics " + hint;
  return where;
}

// Stops the run with one line naming the step, the array, the kernel that writes it and the
// first bad index, when the state holds a NaN or infinity. Nothing of that step is written.
void check_finite(Model& model, std::int64_t step, std::int64_t last_good_snapshot, const std::string& hint) {
  const std::string where = non_finite_values(model, hint);
  if (where.empty()) return;
  throw Error("step " + std::to_string(step) + ": non-finite values in " + where +
              "; run stopped, last good snapshot at step " + std::to_string(last_good_snapshot) +
              " (dt too large or an unstable setup?)");
}

// One profiled step: the hardware counters of each kernel launch beside the telemetry's cost
// model of the same launch (matched in launch order). The step's event timings are not kept:
// under CUPTI's kernel replay they time the replays.
class CounterLog {
 public:
  CounterLog(std::string path) : path_(std::move(path)) {}
  void add(std::int64_t step, const std::vector<KernelRecord>& recs, const std::vector<KernelCounters>& hw) {
    const bool fresh = !std::ifstream(path_).good();
    std::ofstream f(path_, std::ios::app);
    if (fresh)
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
      if (groups.empty() || groups.back().function != k.kernel)
        groups.push_back({k.kernel});
      Group& g = groups.back();
      ++g.launches;
      g.rd += k.dram_read_bytes, g.wr += k.dram_write_bytes, g.ms += k.duration_ms;
      g.hit_weighted += k.l2_hit_rate * k.duration_ms;
    }
    if (groups.size() != recs.size()) {
      groups.clear();
      for (const auto& k : hw)
        groups.push_back({k.kernel, 1, k.dram_read_bytes, k.dram_write_bytes, k.l2_hit_rate * k.duration_ms, k.duration_ms});
      if (!warned_)
        std::fprintf(stderr, "tiersim: counters: %zu launches profiled for %zu telemetry records at step %lld: "
                     "listed unpaired\n", hw.size(), recs.size(), (long long)step);
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
  }
  // Per kernel: modelled bytes against the DRAM bytes the counters saw (last profiled step).
  std::string table() const {
    std::string out = "hardware counters: kernel, compulsory MB, modelled MB, DRAM MB (CUPTI), modelled/DRAM, L2 hit\n";
    char buf[256];
    for (const auto& r : rows_) {
      std::snprintf(buf, sizeof buf, "  %-34s %10.2f %10.2f %10.2f %8.3f %7.1f%%\n", r.kernel.c_str(), r.compulsory / 1e6,
                    r.modelled / 1e6, r.dram / 1e6, r.dram > 0 ? r.modelled / r.dram : 0.0, 100 * r.l2_hit);
      out += buf;
    }
    return out;
  }

 private:
  struct Row {
    std::string kernel;
    double compulsory, modelled, dram, l2_hit;
  };
  std::string path_;
  bool warned_ = false;
  std::vector<Row> rows_;
};

// Keys a restart may change: how far the run goes and how often it writes what. Any other change
// would not continue the same run (time = step * dt against the checkpoint's clock, fp64 data
// under /parameters that say fp32, ...).
bool restart_may_change(const std::string& key) {
  static const char* const kKeys[] = {"run.steps",           "run.snapshot_every", "run.diagnostics_every",
                                      "run.checkpoint_every", "run.telemetry",      "run.telemetry_every"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

// The shortest text that reads back as the same double.
std::string shortest_text(double v) {
  char b[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

// A key's value as text, to compare two cases and to name the values in a message.
std::string value_text(const Case& c, const KeySpec& k) {
  switch (k.type) {
    case KeySpec::Type::Int: return std::to_string(c.get_int(k.key));
    case KeySpec::Type::Float: return shortest_text(c.get_float(k.key));
    case KeySpec::Type::Bool: return c.get_bool(k.key) ? "true" : "false";
    default: return "\"" + c.get_string(k.key) + "\"";
  }
}

// The case a restart continues with: the checkpoint's own, with overrides only of the keys a
// restart may change (an override that repeats the stored value is harmless and allowed).
Case restart_case(const std::string& dir, const Checkpoint& ckpt, const std::vector<std::string>& overrides) {
  const std::string source = (fs::path(dir) / "case.toml").string();
  const Case stored = Case::parse(ckpt.case_toml, source);
  Case c = Case::parse(ckpt.case_toml, source, overrides);
  for (const KeySpec& k : case_schema())
    if (!restart_may_change(k.key) && value_text(c, k) != value_text(stored, k))
      throw Error("--restart " + dir + ": " + k.key + " cannot change when a run continues (" + value_text(stored, k) +
                  " in its checkpoint, " + value_text(c, k) +
                  " asked); a restart takes only run.steps (--steps), run.snapshot_every, run.diagnostics_every, "
                  "run.checkpoint_every, run.telemetry and run.telemetry_every");
  return c;
}

// The checkpoint must be of the run that snapshots.h5 indexes (its /parameters hold the case the
// run started with): SnapshotFile::resume truncates that index and deletes step files, so a
// checkpoint copied from another run (another grid, a wave checkpoint in an N-body run) would
// destroy data or mix two runs. Model, precision and problem size are compared first (the likely
// mix-ups, named as such), then every other key but those a restart may change. The step proves
// nothing either way: a checkpoint lies ahead of the index's last snapshot when
// run.checkpoint_every falls between snapshots, and behind it when the run was killed between a
// snapshot and its checkpoint or checkpoints less often than it snapshots (resume drops the later
// snapshots); only a step past run.steps is wrong, and that is checked with the case.
void check_same_run(const std::string& dir, const Checkpoint& ckpt, const RunInfo& info) {
  const std::string ck = (fs::path(dir) / "checkpoint.h5").string(), h5 = (fs::path(dir) / "snapshots.h5").string();
  auto mismatch = [&](const std::string& what, const std::string& in_ckpt, const std::string& in_h5) {
    return Error(ck + ": not of the run in " + h5 + ": " + what + " " + in_ckpt + " in the checkpoint, " + in_h5 +
                 " in its /parameters; nothing was changed");
  };
  if (ckpt.model != info.model) throw mismatch("model", ckpt.model, info.model);
  const Case mine = Case::parse(ckpt.case_toml, ck), theirs = Case::parse(info.case_toml, h5 + " /parameters");
  static const char* const kFirst[] = {"run.model", "stencil.equation", "strategy.precision", "nbody.count",
                                       "grid.n",    "grid.nx",          "grid.ny",            "grid.nz"};
  std::vector<const KeySpec*> order;
  for (const char* key : kFirst)
    for (const KeySpec& k : case_schema())
      if (k.key == key) order.push_back(&k);
  for (const KeySpec& k : case_schema())
    if (std::find(order.begin(), order.end(), &k) == order.end()) order.push_back(&k);
  for (const KeySpec* k : order)
    if (!restart_may_change(k->key) && value_text(mine, *k) != value_text(theirs, *k))
      throw mismatch(k->key + " =", value_text(mine, *k), value_text(theirs, *k));
}

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

}  // namespace

RunResult run_case(const RunOptions& o) {
  // A restart continues from DIR/checkpoint.h5 with the case stored there (plus overrides).
  // Nothing in DIR is changed until all of it is validated: the checkpoint against the run's
  // snapshots.h5, the overrides, the state the checkpoint holds.
  const bool restart = !o.restart_dir.empty();
  const std::string ckpt_path = restart ? (fs::path(o.restart_dir) / "checkpoint.h5").string() : "";
  if (restart && !o.out_dir.empty())
    throw Error("--out cannot be used with --restart: the run continues in " + o.restart_dir);
  Checkpoint ckpt;
  if (restart) {
    ckpt = read_checkpoint(o.restart_dir);
    check_same_run(o.restart_dir, ckpt, read_run_info(o.restart_dir));
  }
  Case c = restart ? restart_case(o.restart_dir, ckpt, o.overrides) : Case::load(o.case_path, o.overrides);
  Strategy s = strategy_from_case(c);
  std::string why;
  s.backend = resolve_backend(s.backend, &why);
  if (!o.quiet && !why.empty()) std::fprintf(stderr, "tiersim: backend %s\n", why.c_str());
  c.set("strategy.backend", std::string("\"") + name(s.backend) + "\"");

  const std::string model_name = c.get_string("run.model");
  const double dt = c.get_float("run.dt");
  const std::int64_t steps = c.get_int("run.steps");
  const std::int64_t snap_every = c.get_int("run.snapshot_every");
  const std::int64_t diag_every = c.get_int("run.diagnostics_every");
  const std::int64_t ckpt_every = c.get_int("run.checkpoint_every");
  // time = step * dt up to the last step must be a number (run.dt = 1e308 over 100 steps is not).
  if (!std::isfinite(dt * double(steps)))
    throw Error("run.dt = " + shortest_text(dt) + " over run.steps = " + std::to_string(steps) +
                " steps: the simulated time overflows");

  // Everything that can be refused is checked here, before the output directory exists.
  SnapshotOptions snap_options;
  snap_options.formats = parse_formats(o.formats);
  snap_options.double_precision = s.precision == Precision::Fp64;
  set_telemetry_step(0);  // what the model's set-up launches belongs to
  std::unique_ptr<Model> model = model_name == "nbody" ? make_nbody_model(c, s) : make_stencil_model(c, s);
  if (restart) {
    if (ckpt.step > steps)
      throw Error(o.restart_dir + ": the checkpoint is at step " + std::to_string(ckpt.step) + ", past run.steps = " +
                  std::to_string(steps));
    // A damaged checkpoint is refused here, before the run's files are touched, not steps later.
    try {
      model->load_state(ckpt.state);
    } catch (const Error& e) {
      throw Error(ckpt_path + ": " + e.what() + "; not continuing from it (nothing was changed)");
    }
    set_telemetry_step(ckpt.step);  // the diagnostics below belong to the checkpoint's step
  }
  // The state the run starts from is checked before anything is written: physically absurd
  // values (nbody.total_mass = 1e300, nbody.G = 1e308, ...) overflow here, and a checkpoint with
  // a NaN in it is refused rather than continued until the next diagnostics.
  Observables obs = model->observe();
  std::pair<std::string, double> cons = model->conservation(obs);
  if (const std::string bad = non_finite_values(*model, observables_text(obs)); !bad.empty()) {
    if (restart)
      throw Error(ckpt_path + ": non-finite values in " + bad + " at step " + std::to_string(ckpt.step) +
                  "; not continuing from it (nothing was changed)");
    throw Error("step 0: non-finite values in " + bad + " in the initial state; nothing was written (values beyond " +
                name(s.precision) + "'s range?)");
  }
  if (restart && ckpt.step == steps) {
    // Nothing is rewritten: summary.json still describes the run that got here.
    if (!o.silent)
      std::printf("tiersim: %s: nothing to do: the run is complete at step %lld (run.steps); --steps N with N > "
                  "%lld continues it\n",
                  o.restart_dir.c_str(), static_cast<long long>(steps), static_cast<long long>(steps));
    RunResult done;
    done.out_dir = o.restart_dir;
    done.strategy = model->strategy_name();
    done.steps = ckpt.step;
    return done;
  }

  const std::string dir = restart ? o.restart_dir : o.out_dir.empty() ? default_out_dir(o.case_path) : o.out_dir;
  if (!restart) prepare_out_dir(dir, o.force, why_not_replaceable);

  const bool gpu = s.backend == Backend::Cuda;
  const DeviceInfo dev = gpu ? query_device() : DeviceInfo{};
  const std::string device = gpu ? dev.name : "CPU (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
  Telemetry telemetry(gpu ? dev.name + " (device copy kernel)" : "host memory (OpenMP copy)",
                      gpu ? measure_device_copy_gbs(o.remeasure_bandwidth) : measure_host_copy_gbs());
  {
    const bool fp64 = s.precision == Precision::Fp64;
    const std::string what = std::string("an FMA kernel, ") + (fp64 ? "fp64" : "fp32");
    if (gpu) telemetry.set_compute_ceiling(measure_device_fma_gflops(fp64, o.remeasure_bandwidth), what + " on " + dev.name);
    else telemetry.set_compute_ceiling(measure_host_fma_gflops(fp64), what + " on the OpenMP threads");
  }
  const std::string telemetry_csv = (fs::path(dir) / "telemetry.csv").string();

  RunInfo info{c.effective_toml(), restart ? ckpt.case_toml : o.case_path, model->strategy_name(), model->name(),
               TIERSIM_VERSION, device};
  std::unique_ptr<SnapshotFile> out;
  if (restart) {
    out = SnapshotFile::resume(dir, ckpt.step, snap_options.formats);
    Telemetry::truncate_csv(telemetry_csv, ckpt.step);
  } else {
    out = std::make_unique<SnapshotFile>(dir, info, snap_options);
  }
  // Only now, the run validated and its index in place, and whole or not at all.
  write_file_atomically((fs::path(dir) / "case.toml").string(), c.effective_toml());

  if (!o.quiet)
    std::fprintf(stderr, "tiersim: %s, %s, %s, %s%lld steps of dt=%g -> %s\n", model->name().c_str(),
                 model->describe().c_str(), model->strategy_name().c_str(),
                 restart ? ("restart at step " + std::to_string(ckpt.step) + " of ").c_str() : "",
                 static_cast<long long>(steps), dt, dir.c_str());

  g_stop_signal = 0;
  auto old_int = std::signal(SIGINT, on_stop_signal);
  auto old_term = std::signal(SIGTERM, on_stop_signal);
  const std::int64_t inject_nan_at = env_int("TIERSIM_INJECT_NAN_AT_STEP", -1);  // tests only

  // Hardware counters for one step every N (CUDA only); where they cannot be read, say so once.
  std::unique_ptr<HardwareCounters> counters;
  std::unique_ptr<CounterLog> counter_log;
  if (o.counters_every > 0) {
    std::string why;
    if (!gpu) why = "the CPU backend has no GPU counters";
    else counters = make_hardware_counters(&why);
    if (counters) counter_log = std::make_unique<CounterLog>((fs::path(dir) / "counters.csv").string());
    else std::fprintf(stderr, "tiersim: counters unavailable (%s); carrying on without them\n", why.c_str());
  }

  std::int64_t step = restart ? ckpt.step : 0;
  double time = restart ? ckpt.time : 0.0;
  // On a restart, the last snapshot the index kept: with run.checkpoint_every between snapshots
  // the checkpoint's step has none.
  std::int64_t last_snapshot = restart ? out->last_snapshot_step() : step;
  // Host time spent writing output, kept out of seconds_per_step. (Each writer first waits for
  // the device, so what is left is the stepping itself, up to the last step's diagnostics.)
  double output_seconds = 0;
  auto timed = [&](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto checkpoint = [&] {
    if (!o.state_output) return;
    timed([&] { write_checkpoint(dir, Checkpoint{step, time, model->name(), c.effective_toml(), model->save_state()}); });
  };
  // Records carry the step that launched them; reading them without waiting (wait = false)
  // lets the host run ahead of the GPU instead of meeting it at every step.
  auto collect = [&](bool wait) {
    // With run.telemetry_every = N only every N-th step is timed and recorded.
    for (auto& r : model->take_records(wait)) {
      const std::int64_t at = r.step >= 0 ? r.step : step;
      if (at % s.tuning.timing_every == 0) telemetry.add(at, r);
    }
  };
  auto snapshot = [&] {
    timed([&] {
      if (o.state_output) model->write_snapshot(*out, step, time);
      out->commit();
      collect(true);
      telemetry.append_csv(telemetry_csv);
    });
    last_snapshot = step;
  };

  // Kernels run while setting up (the initial force evaluation) belong to step 0; on a restart
  // they were only the fresh model's set-up, replaced by the checkpoint, and are dropped.
  if (restart) model->take_records();
  else telemetry.add(0, model->take_records());

  Progress progress(o.quiet, step, steps);
  const auto wall0 = std::chrono::steady_clock::now();
  if (!restart) {
    out->write_observables(0, 0.0, obs);
    snapshot();
    checkpoint();
  }

  const std::int64_t first_step = step;
  output_seconds = 0;
  const auto loop0 = std::chrono::steady_clock::now();
  while (step < steps) {
    if (step == inject_nan_at) model->inject_nan(step);
    const bool profiled = counters && (step + 1) % o.counters_every == 0;
    if (profiled) {
      collect(true);  // nothing of earlier steps may run inside the profiled range
      counters->begin();
    }
    set_telemetry_step(step + 1);
    {
      TraceRange range("step");
      model->step(dt);
    }
    ++step;
    time = step * dt;
    if (profiled) counter_log->add(step, model->take_records(true), counters->end());
    else collect(false);
    const bool last = step == steps || g_stop_signal != 0;
    const bool snap = (snap_every > 0 && step % snap_every == 0) || last;
    const bool diag = step % diag_every == 0 || last;
    if (diag) {
      obs = model->observe();
      cons = model->conservation(obs);
      timed([&] {
        check_finite(*model, step, last_snapshot, observables_text(obs));
        out->write_observables(step, time, obs);
      });
    } else if (snap) {
      timed([&] { check_finite(*model, step, last_snapshot, ""); });
    }
    if (snap) snapshot();
    if (snap ? ckpt_every == 0 || step % ckpt_every == 0 || last : ckpt_every > 0 && step % ckpt_every == 0) {
      // Never a checkpoint with a NaN in it: it would replace the last good one.
      if (!diag && !snap) timed([&] { check_finite(*model, step, last_snapshot, ""); });
      checkpoint();
    }
    progress.update(step, time, cons, last);
    if (g_stop_signal != 0) break;
  }
  progress.finish();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double loop = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop0).count();
  collect(true);
  const double per_step = step > first_step ? (loop - output_seconds) / double(step - first_step) : 0.0;
  telemetry.append_csv(telemetry_csv);
  char wall_text[64], cons_text[64], per_step_text[64];
  std::snprintf(wall_text, sizeof wall_text, "%.6g", wall);
  std::snprintf(per_step_text, sizeof per_step_text, "%.6g", per_step);
  std::snprintf(cons_text, sizeof cons_text, "%.6g", cons.second);
  telemetry.write_summary_json((fs::path(dir) / "summary.json").string(),
                               {{"model", "\"" + model->name() + "\""},
                                {"strategy", "\"" + model->strategy_name() + "\""},
                                {"device", "\"" + device + "\""},
                                {"steps", std::to_string(step)},
                                {"restarted_from_step", restart ? std::to_string(ckpt.step) : "null"},
                                {"wall_seconds", wall_text},
                                {"seconds_per_step", per_step_text},
                                {"conservation_name", "\"" + cons.first + "\""},
                                {"conservation_value", cons_text},
                                {"interrupted", g_stop_signal ? "true" : "false"}});
  out->write_telemetry(telemetry.rows(), telemetry.peak_gbs(), telemetry.peak_source());
  out->commit();

  if (!o.quiet) {
    std::printf("%s", telemetry.summary_table().c_str());
    if (counter_log) std::printf("%s(every profiled step in counters.csv)\n", counter_log->table().c_str());
    // The steps this process took (a restart names the steps it continued from).
    const std::string from =
        restart ? " (" + std::to_string(first_step) + " to " + std::to_string(step) + ")" : std::string();
    std::printf("%s %lld steps%s in %.3f s wall (%.4g ms per step without output), %s = %+.3e\n",
                g_stop_signal ? "stopped after" : "finished", static_cast<long long>(step - first_step), from.c_str(),
                wall, 1e3 * per_step, cons.first.c_str(), cons.second);
  }
  if (!o.silent) std::printf("output: %s (snapshots.h5, snapshots.xmf, telemetry.csv, summary.json)\n", dir.c_str());
  RunResult result;
  result.exit_code = g_stop_signal ? 128 + g_stop_signal.load() : 0;
  result.out_dir = dir;
  result.strategy = model->strategy_name();
  result.steps = step;
  result.wall_seconds = wall;
  result.telemetry = std::move(telemetry);
  return result;
}

}  // namespace tiersim
