#include "sim/run.hpp"

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/snapshots.hpp"
#include "kernels/device_info.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"
#include "sim/telemetry.hpp"

namespace tiersim {
namespace fs = std::filesystem;

namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// One updating line on a terminal; a plain line every few seconds otherwise.
class Progress {
 public:
  Progress(bool quiet, std::int64_t total) : quiet_(quiet), tty_(isatty(STDERR_FILENO)), total_(total) {}
  void update(std::int64_t step, double time, const std::pair<std::string, double>& cons, bool force = false) {
    if (quiet_) return;
    const auto now = clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? step / elapsed : 0;
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
  std::int64_t total_;
  clock::time_point start_ = clock::now(), last_{};
};

std::string default_out_dir(const std::string& case_path) {
  return (fs::path("out") / fs::path(case_path).stem()).string();
}

void prepare_out_dir(const std::string& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(dir + ": output path exists and is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force) throw Error(dir + ": output directory exists and is not empty (use --force to replace it)");
      fs::remove_all(dir, ec);
      if (ec) throw Error(dir + ": cannot remove the old output: " + ec.message());
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  const std::string probe = (fs::path(dir) / ".tiersim-write-test").string();
  if (!std::ofstream(probe)) throw Error(dir + ": output directory is not writable");
  fs::remove(probe, ec);
}

}  // namespace

RunResult run_case(const RunOptions& o) {
  Case c = Case::load(o.case_path, o.overrides);
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

  // Everything that can be refused is checked here, before the output directory exists.
  SnapshotOptions snap_options;
  snap_options.formats = parse_formats(o.formats);
  snap_options.double_precision = s.precision == Precision::Fp64;
  std::unique_ptr<Model> model = model_name == "nbody" ? make_nbody_model(c, s) : make_stencil_model(c, s);

  const std::string dir = o.out_dir.empty() ? default_out_dir(o.case_path) : o.out_dir;
  prepare_out_dir(dir, o.force);
  {
    std::ofstream f(fs::path(dir) / "case.toml");
    f << c.effective_toml();
  }

  const bool gpu = s.backend == Backend::Cuda;
  const DeviceInfo dev = gpu ? query_device() : DeviceInfo{};
  const std::string device = gpu ? dev.name : "CPU (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
  Telemetry telemetry(gpu ? dev.name + " (device copy kernel)" : "host memory (OpenMP copy)",
                      gpu ? measure_device_copy_gbs() : measure_host_copy_gbs());

  RunInfo info{c.effective_toml(), o.case_path, model->strategy_name(), model->name(), TIERSIM_VERSION, device};
  SnapshotFile out(dir, info, snap_options);

  if (!o.quiet)
    std::fprintf(stderr, "tiersim: %s, %s, %s, %lld steps of dt=%g -> %s\n", model->name().c_str(),
                 model->describe().c_str(), model->strategy_name().c_str(), static_cast<long long>(steps), dt,
                 dir.c_str());

  g_stop_signal = 0;
  auto old_int = std::signal(SIGINT, on_stop_signal);
  auto old_term = std::signal(SIGTERM, on_stop_signal);

  Progress progress(o.quiet, steps);
  const auto wall0 = std::chrono::steady_clock::now();
  Observables obs = model->observe();
  out.write_observables(0, 0.0, obs);
  model->write_snapshot(out, 0, 0.0);
  out.commit();

  std::int64_t step = 0;
  double time = 0;
  std::pair<std::string, double> cons = model->conservation(obs);
  while (step < steps) {
    model->step(dt);
    ++step;
    time = step * dt;
    telemetry.add(step, model->take_records());
    const bool last = step == steps || g_stop_signal != 0;
    if (step % diag_every == 0 || last) {
      obs = model->observe();
      cons = model->conservation(obs);
      out.write_observables(step, time, obs);
      if (!std::isfinite(cons.second))
        throw Error("step " + std::to_string(step) + ": " + cons.first + " is not finite: the run diverged (dt too large?)");
    }
    if ((snap_every > 0 && step % snap_every == 0) || last) {
      model->write_snapshot(out, step, time);
      out.commit();
    }
    progress.update(step, time, cons, last);
    if (g_stop_signal != 0) break;
  }
  progress.finish();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  telemetry.write_csv((fs::path(dir) / "telemetry.csv").string());
  char wall_text[64], cons_text[64];
  std::snprintf(wall_text, sizeof wall_text, "%.6g", wall);
  std::snprintf(cons_text, sizeof cons_text, "%.6g", cons.second);
  telemetry.write_summary_json((fs::path(dir) / "summary.json").string(),
                               {{"model", "\"" + model->name() + "\""},
                                {"strategy", "\"" + model->strategy_name() + "\""},
                                {"device", "\"" + device + "\""},
                                {"steps", std::to_string(step)},
                                {"wall_seconds", wall_text},
                                {"conservation_name", "\"" + cons.first + "\""},
                                {"conservation_value", cons_text},
                                {"interrupted", g_stop_signal ? "true" : "false"}});
  out.write_telemetry(telemetry);
  out.commit();

  if (!o.quiet) {
    std::printf("%s", telemetry.summary_table().c_str());
    std::printf("%s %lld steps in %.3f s wall, %s = %+.3e\n", g_stop_signal ? "stopped after" : "finished",
                static_cast<long long>(step), wall, cons.first.c_str(), cons.second);
  }
  std::printf("output: %s (snapshots.h5, snapshots.xmf, telemetry.csv, summary.json)\n", dir.c_str());
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
