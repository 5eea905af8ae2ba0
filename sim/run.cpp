// The time loop behind `tiersim run`: set-up (validated before anything is written), the steps
// with diagnostics, snapshots, checkpoints and telemetry at their cadences, and the run's end.
#include "sim/run.hpp"

#include "base/env.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>

#include "base/comm.hpp"
#include "base/trace.hpp"
#include "io/checkpoint.hpp"
#include "base/host_memory.hpp"
#include "io/output_queue.hpp"
#include "io/snapshots.hpp"
#include "io/safe_files.hpp"
#include "io/restart_pruning.hpp"
#include "io/snapshot_index.hpp"
#include "io/state_parts.hpp"
#include "kernels/device_info.hpp"
#include "kernels/hw_counters.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/transport.hpp"
#include "sim/case.hpp"
#include "sim/counter_log.hpp"
#include "sim/model.hpp"
#include "sim/output_dir.hpp"
#include "sim/progress.hpp"
#include "sim/restart_validation.hpp"
#include "sim/run_breakdown.hpp"
#include "sim/stop_signal.hpp"
#include "sim/telemetry.hpp"

namespace tiersim {
namespace fs = std::filesystem;

namespace {

std::string observables_text(const Observables& obs) {
  std::string s;
  for (const auto& [k, v] : obs)
    if (!std::isfinite(v)) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// Where the state holds a NaN or infinity: the first bad index of each array and the kernel
// that writes it, else the diagnostics (`hint`) that are not finite; empty when all is finite.
std::string non_finite_text(const std::vector<NonFinite>& bad, const std::string& hint) {
  if (bad.empty() && hint.empty()) return "";
  std::string where;
  for (const auto& b : bad)
    where += (where.empty() ? "" : ", ") + b.array + "[" + std::to_string(b.index) + "] (kernel " + b.kernel + ")";
  if (bad.empty()) where = "the diagnostics " + hint;
  return where;
}
std::string non_finite_values(Model& model, const std::string& hint) {
  return non_finite_text(model.find_non_finite(), hint);
}

// Stops the run with one line naming the step, the array, the kernel that writes it and the
// first bad index, when the state holds a NaN or infinity (`where`, from the above). Nothing of
// that step is written.
void stop_if_non_finite(const std::string& where, std::int64_t step, std::int64_t last_good_snapshot) {
  if (where.empty()) return;
  throw Error("step " + std::to_string(step) + ": non-finite values in " + where +
              "; run stopped, last good snapshot at step " + std::to_string(last_good_snapshot) +
              " (dt too large or an unstable setup?)");
}

// One figure of every rank, and its spread over them (collective).
RunBreakdown::Spread over_ranks(double v) {
  const std::vector<double> each = comm::allgather(v);
  std::vector<double> all = each;
  std::sort(all.begin(), all.end());
  const std::size_t n = all.size();
  return {all.front(), n % 2 ? all[n / 2] : 0.5 * (all[n / 2 - 1] + all[n / 2]), all.back(), each};
}

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

}  // namespace

RunResult run_case(const RunOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  // Where start-up went: each part is the time since the one before.
  StartupClock startup(t_start);
  // Several ranks (mpirun): every rank takes the steps on its part of the state; rank 0 alone
  // speaks and writes the run directory (the state is gathered to it for output).
  const bool root = comm::is_root();
  RunOptions o = options;
  if (!root) o.quiet = o.silent = true;
  // A restart continues from DIR/checkpoint.h5 with the case stored there (plus overrides).
  // Nothing in DIR is changed until all of it is validated: the checkpoint against the run's
  // snapshots.h5, the overrides, the state the checkpoint holds.
  const bool restart = !o.restart_dir.empty();
  const std::string ckpt_path = restart ? (fs::path(o.restart_dir) / "checkpoint.h5").string() : "";
  if (restart && !o.out_dir.empty())
    throw Error("--out cannot be used with --restart: the run continues in " + o.restart_dir);
  Checkpoint ckpt;
  RunLock lock;
  if (restart) {
    // First the lock: while another process writes the run, nothing of it is read or changed.
    std::error_code ec;
    if (!fs::is_directory(o.restart_dir, ec)) throw Error(o.restart_dir + ": no such run directory");
    comm::on_every_rank([&] {
      if (!root) return;
      const PathType checkpoint = path_type((fs::path(o.restart_dir) / kCheckpointName).string());
      const bool has_checkpoint = checkpoint == PathType::File;
      // A run that ended (its summary written) without a checkpoint wrote no state (a checkpoint
      // that is something else, a link say, is refused as such by read_checkpoint).
      if (checkpoint == PathType::Missing &&
          path_type((fs::path(o.restart_dir) / "summary.json").string()) == PathType::File)
        throw Error(o.restart_dir + ": no " + kCheckpointName +
                    ": the run wrote none (--no-snapshots, or a compare), so it cannot be continued");
      if (has_checkpoint || path_type((fs::path(o.restart_dir) / kLockName).string()) != PathType::Missing)
        lock = RunLock(o.restart_dir, has_checkpoint, "not continuing it (nothing was changed)");
    });
    // The state's arrays once the checkpoint is known to be of this run (below): a checkpoint moved
    // in from another run is refused as such, not for the parts of the state it names.
    ckpt = read_checkpoint(o.restart_dir, false);
    if (!ckpt.record.present)
      throw Error(ckpt_path +
                  ": written by an older tiersim, without the record a restart checks the run against; "
                  "not continuing it (nothing was changed)");
  }
  // The snapshots the restart keeps, rebuilt from the step files (never from snapshots.h5, which
  // is derived), and telemetry.csv as far as the checkpoint: every input checked, nothing changed.
  SnapshotIndex kept;
  Telemetry::CsvPart csv_part;
  if (restart) {
    kept = rebuild_index(
        o.restart_dir, RestartPoint{ckpt.step, ckpt.record.last_snapshot_step, ckpt.record.observables_since_snapshot});
    check_same_run(o.restart_dir, ckpt, kept.info);
    ckpt = read_checkpoint(o.restart_dir);
  }
  Case c = restart ? restart_case(o.restart_dir, ckpt, o.overrides) : Case::load(o.case_path, o.overrides);
  if (restart) {
    csv_part = Telemetry::read_csv_part((fs::path(o.restart_dir) / "telemetry.csv").string(),
                                        ckpt.record.telemetry_bytes, ckpt.record.telemetry_fnv1a, ckpt.step);
    for (const StepRecord& r : csv_part.rows)
      kept.telemetry.push_back({r.step, r.rec.kernel, r.rec.strategy, r.rec.work_unit, r.rec.ms, r.rec.bytes_compulsory,
                                r.rec.bytes_modelled, r.rec.flops, r.rec.work, r.rec.l2_window, r.rec.l2_window_bytes,
                                r.rec.l2_hit_ratio});
  }
  raise_test_signal("setup");
  Strategy s = strategy_from_case(c);
  std::string why;
  comm::on_every_rank([&] { s.backend = resolve_backend(s.backend, &why); });  // --backend cuda on a rank without a GPU
  if (!o.quiet && !why.empty()) std::fprintf(stderr, "tiersim: backend %s\n", why.c_str());
  c.set("strategy.backend", std::string("\"") + name(s.backend) + "\"");
  // Collective: NCCL between the ranks' GPUs or MPI through the host (kernels/transport.hpp).
  s.transport = resolve_transport(s.transport, s.backend);

  const std::string model_name = c.get_string("run.model");
  // The copy engines carry a stencil's halo planes between neighbours; N-body's positions go to
  // every rank, through NCCL (whose communicator resolving to Ipc made).
  if (s.transport == Transport::Ipc && model_name == "nbody") s.transport = Transport::Nccl;
  const double dt = c.get_float("run.dt");
  const std::int64_t steps = c.get_int("run.steps");
  const std::int64_t snap_every = c.get_int("run.snapshot_every");
  const std::int64_t diag_every = c.get_int("run.diagnostics_every");
  const std::int64_t ckpt_every = c.get_int("run.checkpoint_every");
  const int output_slots = int(c.get_int("run.output_slots"));
  // time = step * dt up to the last step must be a number (run.dt = 1e308 over 100 steps is not).
  if (!std::isfinite(dt * double(steps)))
    throw Error("run.dt = " + shortest_text(dt) + " over run.steps = " + std::to_string(steps) +
                " steps: the simulated time overflows");

  // Everything that can be refused is checked here, before the output directory exists.
  SnapshotOptions snap_options;
  snap_options.formats = parse_formats(o.formats);
  snap_options.double_precision = s.precision == Precision::Fp64;
  set_telemetry_step(0);  // what the model's set-up launches belongs to
  const ModelSetup setup{o.state_output, restart};
  std::unique_ptr<Model> model =
      model_name == "nbody" ? make_nbody_model(c, s, setup) : make_stencil_model(c, s, setup);
  // The model's own parts, the rest (the case, the checks) apart.
  startup.part_around(restart ? "case, checks and checkpoint read" : "case and checks", model->startup_parts());
  if (snap_options.formats.vtk && o.state_output && !model->gathers_whole_state() && comm::size() > 1)
    throw Error("--format vtk: VTK files hold whole grids, and on " + std::to_string(comm::size()) +
                " ranks each rank writes its slab of the grid; run on one rank, or without --format vtk (ParaView "
                "opens snapshots.xmf)");
  if (restart) {
    if (ckpt.step > steps)
      throw Error(o.restart_dir + ": the checkpoint is at step " + std::to_string(ckpt.step) +
                  ", past run.steps = " + std::to_string(steps));
    // A damaged checkpoint is refused here, before the run's files are touched, not steps later.
    try {
      model->load_state(ckpt.state);
    } catch (const Error& e) {
      throw Error(ckpt_path + ": " + e.what() + "; not continuing from it (nothing was changed)");
    }
    set_telemetry_step(ckpt.step);  // the diagnostics below belong to the checkpoint's step
    startup.part("checkpoint's state loaded");
  }
  // The state the run starts from is checked before anything is written: physically absurd
  // values (nbody.total_mass = 1e300, nbody.G = 1e308, ...) overflow here, and a checkpoint with
  // a NaN in it is refused rather than continued until the next diagnostics.
  model->queue_observation();
  Observation initial = model->take_observation();  // the observables and the non-finite check, in one pass
  Observables obs = std::move(initial.values);
  startup.part("initial diagnostics");
  std::pair<std::string, double> cons = model->conservation(obs);
  if (const std::string bad = non_finite_text(initial.non_finite, observables_text(obs)); !bad.empty()) {
    if (restart)
      throw Error(ckpt_path + ": non-finite values in " + bad + " at step " + std::to_string(ckpt.step) +
                  "; not continuing from it (nothing was changed)");
    throw Error("step 0: non-finite values in " + bad + " in the initial state; nothing was written (values beyond " +
                name(s.precision) + "'s range?)");
  }
  if (restart && ckpt.step == steps) {
    // Nothing is rewritten: summary.json still describes the run that got here.
    if (!o.silent)
      std::printf(
          "tiersim: %s: nothing to do: the run is complete at step %lld (run.steps); --steps N with N > "
          "%lld continues it\n",
          o.restart_dir.c_str(), static_cast<long long>(steps), static_cast<long long>(steps));
    RunResult done;
    done.out_dir = o.restart_dir;
    done.strategy = model->strategy_name();
    done.steps = ckpt.step;
    return done;
  }

  // A stop asked for while setting up: nothing was written yet, and nothing will be.
  if (const int sig = comm::size() == 1 ? stop_signal() : int(comm::max(std::int64_t(stop_signal())))) {
    if (!o.silent)
      std::fprintf(stderr, "tiersim: stopped by %s before the run started; nothing was written\n", signal_name(sig));
    RunResult stopped;
    stopped.exit_code = 128 + sig;
    return stopped;
  }

  const std::string dir = restart ? o.restart_dir : o.out_dir.empty() ? default_out_dir(o.case_path) : o.out_dir;
  const bool gpu = s.backend == Backend::Cuda;
  const DeviceInfo dev = gpu ? query_device() : DeviceInfo{};
  const int ranks = comm::size();
  const std::string device = (gpu ? dev.name : "CPU (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)") +
                             (ranks > 1 ? " x " + std::to_string(ranks) + " ranks" : "");
  const std::string telemetry_csv = (fs::path(dir) / "telemetry.csv").string();
  // The ceilings are measured by rank 0 (ranks sharing a GPU would measure each other) and rated
  // for all: the ranks' devices are of one kind.
  double ceilings[3] = {0, 0, 0};  // copy GB/s, FMA GFLOP/s, pinned link GB/s
  const bool fp64 = s.precision == Precision::Fp64;
  std::unique_ptr<SnapshotFile> out;
  comm::on_every_rank([&] {
    if (!root) return;
    // The directory's lock is held from before its first file is written or deleted to the end.
    if (!restart) lock = prepare_out_dir(dir, o.force, why_not_replaceable, remove_run_files);
    ceilings[0] = gpu ? measure_device_copy_gbs(o.remeasure_bandwidth) : measure_host_copy_gbs();
    ceilings[1] = gpu ? measure_device_fma_gflops(fp64, o.remeasure_bandwidth) : measure_host_fma_gflops(fp64);
    // Device-to-host copies are rated against the pinned link, measured once per device.
    ceilings[2] = gpu && o.state_output ? measure_pinned_link_gbs(o.remeasure_bandwidth) : 0.0;
  });
  comm::broadcast(ceilings, sizeof ceilings);
  // Exchanges between the ranks are rated against their link, measured here between neighbours:
  // GPU to GPU through NCCL or the copy engines, or host memory to host memory through MPI.
  const double exchange_gbs = s.transport == Transport::Nccl  ? measure_nccl_exchange_gbs()
                              : s.transport == Transport::Ipc ? measure_ipc_exchange_gbs()
                                                              : comm::measure_exchange_gbs();
  startup.part("bandwidth figures");
  Telemetry telemetry(gpu ? dev.name + " (device copy kernel)" : "host memory (OpenMP copy)", ceilings[0]);
  {
    const std::string what = std::string("an FMA kernel, ") + (fp64 ? "fp64" : "fp32");
    telemetry.set_compute_ceiling(ceilings[1], what + " on " + (gpu ? dev.name : std::string("the OpenMP threads")));
  }
  const double link_gbs = ceilings[2];

  RunInfo info{c.effective_toml(),     restart ? ckpt.case_toml : o.case_path,
               model->strategy_name(), model->name(),
               TIERSIM_VERSION,        device};
  comm::on_every_rank([&] {
    if (!root) return;
    if (restart) {
      out = SnapshotFile::resume(dir, kept, snap_options.formats);
      // Parts that neither a kept step file nor the checkpoint names.
      std::vector<std::int64_t> keep = kept.steps();
      keep.push_back(ckpt.step);
      remove_state_parts_but(dir, keep);
      telemetry.resume_csv(telemetry_csv, csv_part);
    } else {
      out = std::make_unique<SnapshotFile>(dir, info, snap_options);
    }
    // Only now, the run validated and its index in place, and whole or not at all.
    write_file_atomically((fs::path(dir) / "case.toml").string(), c.effective_toml());
  });

  if (!o.quiet)
    std::fprintf(stderr, "tiersim: %s, %s, %s, %s%lld steps of dt=%g -> %s\n", model->name().c_str(),
                 model->describe().c_str(), model->strategy_name().c_str(),
                 restart ? ("restart at step " + std::to_string(ckpt.step) + " of ").c_str() : "",
                 static_cast<long long>(steps), dt, dir.c_str());

  const std::int64_t inject_nan_at = env_int(env::kInjectNanAtStep, -1);  // tests only

  // Hardware counters for one step every N (CUDA only); where they cannot be read, say so once.
  std::unique_ptr<HardwareCounters> counters;
  std::unique_ptr<CounterLog> counter_log;
  if (o.counters_every > 0) {
    std::string why;
    if (!gpu)
      why = "the CPU backend has no GPU counters";
    else
      counters = make_hardware_counters(&why);
    if (counters)
      counter_log = std::make_unique<CounterLog>((fs::path(dir) / "counters.csv").string());
    else
      std::fprintf(stderr, "tiersim: counters unavailable (%s); carrying on without them\n", why.c_str());
  }

  std::int64_t step = restart ? ckpt.step : 0;
  double time = restart ? ckpt.time : 0.0;
  // On a restart, the last snapshot the index kept: with run.checkpoint_every between snapshots
  // the checkpoint's step has none.
  std::int64_t last_snapshot = restart && root ? out->last_snapshot_step() : step;
  comm::broadcast(&last_snapshot, sizeof last_snapshot);
  RunBreakdown wall;
  wall.slots = output_slots > 0 ? output_slots : 2;
  wall.timing_every = s.tuning.timing_every;
  wall.ranks = ranks;
  wall.exchange_link_gbs = exchange_gbs;
  if (ranks > 1) wall.transport = name(s.transport);
  auto seconds = [](auto t0) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  auto timed = [&](double& into, auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    into += seconds(t0);
  };
  bool in_steady_state = false;
  // Records carry the step that launched them; reading them without waiting (wait = false)
  // lets the host run ahead of the GPU instead of meeting it at every step.
  auto collect = [&](bool wait) {
    // With run.telemetry_every = N only every N-th step is timed and recorded.
    for (auto& r : model->take_records(wait)) {
      const std::int64_t at = r.step >= 0 ? r.step : step;
      // Diagnostics passes are timed on every diagnostics step and counted as they are.
      if (at % s.tuning.timing_every != 0 && !r.diagnostics) continue;
      if (r.communication) r.ceiling_gbs = exchange_gbs > 0 ? exchange_gbs : -1;
      if (in_steady_state)
        (r.communication ? (r.overlapped ? wall.communication_beside : wall.communication)
                         : (r.diagnostics ? wall.diagnostics_kernels : wall.kernels)) += r.ms * 1e-3;
      telemetry.add(at, r);
    }
  };

  // Output behind the computation: the state is staged on this thread (on the GPU the copies are
  // only issued), the output thread waits for the copies and writes the step file, the index and
  // the checkpoint. Telemetry rows of the copies and file writes come back through `done`.
  std::mutex done_mu;
  std::vector<StepRecord> done;
  // Rank 0's: the other ranks write nothing but their parts.
  std::shared_ptr<SnapshotFile> out_shared(std::move(out));
  SnapshotFile* const index = out_shared.get();
  // The state is written in parts, each rank its slab or its bodies (io/state_parts.hpp; one rank:
  // one part), which the step file and the checkpoint of a step both name: the state goes to the disk
  // once per output, not once for the snapshot and again for the checkpoint. Rank 0's output
  // thread waits for every part of a step before its files name them, and gives up if the run
  // ends by an error meanwhile. VTK files hold whole arrays: with --format vtk the state is
  // staged whole (a grid's on one rank only).
  const bool in_parts = !snap_options.formats.vtk;
  std::atomic<bool> abandon_parts{false};
  // The output thread's: the step of the parts only the checkpoint names (a restart's own, where
  // its checkpoint came between snapshots).
  std::int64_t checkpoint_only_parts = -1;
  if (restart && root) {
    const std::vector<std::int64_t> snapshots = kept.steps();
    if (std::find(snapshots.begin(), snapshots.end(), ckpt.step) == snapshots.end()) checkpoint_only_parts = ckpt.step;
  }
  // Declared after everything its jobs use: destroyed first, it finishes them (an error thrown
  // from the loop still leaves every staged snapshot written).
  OutputQueue queue(output_slots > 0 ? output_slots : 2);
  struct AbandonOnError {
    std::atomic<bool>& flag;
    int before = std::uncaught_exceptions();
    ~AbandonOnError() {
      if (std::uncaught_exceptions() > before) flag = true;
    }
  } abandon_on_error{abandon_parts};
  bool slots_sized = output_slots > 0;
  auto emit = [&](bool snap, bool ckpt) {
    if (!o.state_output) {
      if (snap && root) wall.writer_wait += queue.submit([index] { index->commit(); });
      return;
    }
    std::shared_ptr<StagedOutput> staged;
    // The first output's staging (buffers pinned for every slot) is start-up's.
    double startup_staging = 0;
    timed(in_steady_state ? wall.staging : startup_staging,
          [&] { staged = model->stage_output(step, time, in_parts); });
    if (!staged) return;  // another rank: its part was gathered to rank 0
    if (!slots_sized) {
      // run.output_slots = 0: as many staged states as a quarter of the available host memory
      // holds (2 to 64), so that the steps run ahead of a slow disk while memory allows.
      slots_sized = true;
      const double one = std::max(1.0, staged->bytes());
      const double fit = 0.25 * double(host_memory_available()) / one;
      queue.set_slots(int(std::clamp(fit, 2.0, 64.0)));
      wall.slots = queue.slots();
    }
    const std::int64_t at = step;
    const double t = time;
    Checkpoint head{at, t, model->name(), c.effective_toml(), {}, {}};
    if (ckpt && root) {
      // The checkpoint records telemetry.csv as far as this step (appended here, on this thread)
      // and, on the output thread, the index as far as this step: what a restart checks.
      telemetry.append_csv(telemetry_csv);
      head.record.telemetry_bytes = telemetry.csv_bytes();
      head.record.telemetry_fnv1a = telemetry.csv_fnv1a();
    }
    wall.snapshots += snap, wall.checkpoints += ckpt;
    wall.writer_wait += queue.submit(
        [&, staged, snap, ckpt, at, in_parts, head = std::move(head)]() mutable {
          std::vector<KernelRecord> recs = staged->wait();
          for (auto& r : recs) r.ceiling_gbs = link_gbs;
          const auto t0 = std::chrono::steady_clock::now();
          const std::uint64_t before = root ? index->bytes_written() : 0;
          std::uint64_t bytes = 0;
          if (in_parts) {
            std::int64_t first = 0;
            const std::vector<StatePartArray> arrays = staged->part(first, ckpt);
            bytes += write_state_part(dir, at, comm::rank(), first, arrays);
            // Ten minutes without a part of the step appearing or growing: a rank failed before its
            // part was begun (a rank whose write failed after its .tmp appeared is seen at once).
            if (root) wait_for_state_parts(dir, at, ranks, abandon_parts, 600.0);
          }
          if (root) {
            if (snap) {
              staged->write_snapshot(*index);
              index->commit();
            }
            raise_test_signal("writing", at);
            if (ckpt) {
              head.state = staged->state();
              head.record.present = true;
              head.record.last_snapshot_step = index->last_published_step();
              head.record.observables_since_snapshot = index->observables_since_snapshot();
              bytes += write_checkpoint(dir, head);
              // The parts of the checkpoint before, if no step file names them, are nobody's now.
              if (in_parts) {
                if (checkpoint_only_parts >= 0) remove_state_parts(dir, checkpoint_only_parts);
                checkpoint_only_parts = snap ? -1 : at;
              }
            }
            bytes += index->bytes_written() - before;
          }
          KernelRecord w;
          w.kernel = "write_output";
          w.strategy = std::string(snap ? "snapshot" : "") + (snap && ckpt ? "+" : "") + (ckpt ? "checkpoint" : "");
          w.ms = seconds(t0) * 1e3;
          w.bytes_compulsory = w.bytes_modelled = w.work = double(bytes);  // the files' bytes, as placed
          w.work_unit = "bytes";
          w.ceiling_gbs = -1;  // no disk figure to compare with
          recs.push_back(std::move(w));
          std::lock_guard<std::mutex> lk(done_mu);
          for (auto& r : recs) done.push_back({at, std::move(r)});
        },
        true);
  };
  int stop_sig = 0;  // the signal that stopped the run, as the ranks agreed
  auto agree_on_stop = [&](OutputQueue& q) {
    if (ranks == 1) {
      q.rethrow();
      stop_sig = stop_signal();
      return stop_sig != 0;
    }
    std::string failed;
    try {
      q.rethrow();
    } catch (const Error& e) {
      failed = e.what();
    }
    const std::int64_t agreed = comm::max(std::int64_t(failed.empty() ? 0 : 1) << 32 | std::int64_t(stop_signal()));
    if (agreed >> 32) throw Error(failed.empty() ? "rank 0's output failed" : failed);
    stop_sig = int(agreed & 0xffffffff);
    return stop_sig != 0;
  };
  auto take_done = [&] {
    std::lock_guard<std::mutex> lk(done_mu);
    for (auto& d : done) {
      if (d.rec.kernel == "write_output") wall.bytes_written += d.rec.bytes_compulsory;
      telemetry.add(d.step, d.rec);
    }
    done.clear();
  };

  // Kernels run while setting up (the initial force evaluation) belong to step 0; on a restart
  // they were only the fresh model's set-up, replaced by the checkpoint, and are dropped.
  if (restart)
    model->take_records();
  else
    telemetry.add(0, model->take_records());

  Progress progress(o.quiet, step, steps);
  if (!restart) {
    if (root) queue.submit([index, obs] { index->write_observables(0, 0.0, obs); });
    startup.part("output files");
    emit(true, true);
    collect(false);
    if (root) telemetry.append_csv(telemetry_csv);
  }

  // Diagnostics behind the steps: a diagnostics step without output queues its reductions after
  // its steps, and they are taken once the next steps are queued, so that the GPU never waits for
  // the host's reading of them. A step with output (or the last) takes them at once.
  struct Queued {
    std::int64_t step = 0;
    double time = 0;
    std::int64_t last_snapshot = 0;
  };
  std::optional<Queued> queued_obs;
  auto observed = [&](std::int64_t at, double t, std::int64_t last_good) {
    Observation o;
    timed(wall.diagnostics, [&] {
      o = model->take_observation();
      obs = std::move(o.values);
      cons = model->conservation(obs);
      stop_if_non_finite(non_finite_text(o.non_finite, observables_text(obs)), at, last_good);
    });
    if (root) queue.submit([index, at, t, obs] { index->write_observables(at, t, obs); });
  };
  auto take_queued = [&] {
    if (!queued_obs) return;
    const Queued q = *queued_obs;
    queued_obs.reset();
    model->await_observation();  // the steps before it: their time, as collect(true)'s wait
    observed(q.step, q.time, q.last_snapshot);
  };

  const std::int64_t first_step = step;
  double drained_at_last_step = 0;
  bool interrupted = false;  // stopped by a signal before run.steps
  startup.part(restart ? "output files" : "first output staged");
  wall.startup = seconds(t_start);
  wall.startup_parts = startup.parts();
  in_steady_state = true;
  const auto loop0 = std::chrono::steady_clock::now();
  while (step < steps) {
    if (step == inject_nan_at) model->inject_nan(step);
    const bool profiled = counters && (step + 1) % o.counters_every == 0;
    if (profiled) {
      collect(true);  // nothing of earlier steps may run inside the profiled range
      counters->begin();
    }
    // The steps up to the next one whose state is looked at (diagnostics, snapshot, checkpoint,
    // the end, a profiled step): a strategy that fuses steps (--tiling temporal) may take them
    // in one pass; the others take one. Without state output (--no-snapshots) the snapshot and
    // checkpoint steps look at nothing, and a pass may run past them.
    auto to_next = [&](std::int64_t every) { return every > 0 ? every - step % every : steps - step; };
    const std::int64_t snap_stop = o.state_output ? snap_every : 0, ckpt_stop = o.state_output ? ckpt_every : 0;
    std::int64_t horizon = std::min({steps - step, to_next(diag_every), to_next(snap_stop), to_next(ckpt_stop)});
    if (inject_nan_at > step) horizon = std::min(horizon, inject_nan_at - step);
    if (counters) horizon = 1;
    set_telemetry_step(step + 1);
    const std::int64_t before = step;
    {
      TraceRange range("step");
      timed(wall.host_queuing, [&] { step += model->advance(dt, horizon); });
    }
    time = step * dt;
    if (profiled)
      counter_log->add(step, model->take_records(true), counters->end());
    else
      collect(false);
    take_queued();
    // An output error ends the run here, with its line. The stop request is read once: the same
    // answer makes this step the last one (its diagnostics, snapshot and checkpoint) and ends the
    // loop. A signal arriving after this line is seen after the next step, which then ends the same
    // way. Several ranks agree on both (the launcher may deliver a signal to each at another step).
    bool stop = false;
    timed(wall.host_agreeing, [&] { stop = agree_on_stop(queue); });
    const bool last = step == steps || stop;
    // A cadence's step was reached by this advance (or run past: above).
    auto reached = [&](std::int64_t every) { return every > 0 && step / every != before / every; };
    const bool snap = reached(snap_every) || last;
    const bool diag = step % diag_every == 0 || last;
    const bool ckpt = snap ? ckpt_every == 0 || reached(ckpt_every) || last : reached(ckpt_every);
    // A snapshot or checkpoint to stage: the state is checked first (and the diagnostics read).
    const bool output_now = o.state_output && (snap || ckpt);
    const bool behind = diag && !output_now && !last && model->queues_observations();
    // Diagnostics taken now wait for the steps queued before them: that wait is the steps' (their
    // kernels are timed), so the records are taken, waiting, before the diagnostics' clock starts.
    if ((diag && !behind) || output_now) collect(true);
    if (diag) {
      raise_test_signal("diagnostics", step);
      timed(wall.diagnostics, [&] { model->queue_observation(); });
      if (behind) {
        queued_obs = Queued{step, time, last_snapshot};
      } else {
        model->await_observation();  // the steps queued since the records were taken: their time
        observed(step, time, last_snapshot);
      }
    } else if (output_now) {
      // Never a snapshot or checkpoint with a NaN in it: it would replace the last good one.
      timed(wall.diagnostics, [&] { stop_if_non_finite(non_finite_values(*model, ""), step, last_snapshot); });
    }
    if (ckpt && last && o.state_output) {
      // The last checkpoint records telemetry.csv with every row of the run but its own output's:
      // a restart extending a finished or stopped run keeps them (it drops what was appended after
      // its checkpoint). This wait is the final flush's, not the steps'.
      timed(drained_at_last_step, [&] { queue.drain(); });
      take_done();
      collect(true);
    }
    if (snap) {
      emit(true, ckpt);
      take_done();
      if (root) telemetry.append_csv(telemetry_csv);
      last_snapshot = step;
    } else if (ckpt) {
      emit(false, true);
    }
    progress.update(step, time, cons, last);
    if (stop) {
      interrupted = step < steps;
      break;
    }
  }
  progress.finish();
  collect(true);
  in_steady_state = false;
  wall.steady = seconds(loop0) - drained_at_last_step;
  wall.steps = step - first_step;
  if (ranks > 1) {
    wall.rank_steady = over_ranks(wall.steady);
    wall.rank_kernels = over_ranks(wall.kernels_total());
    wall.rank_communication = over_ranks(wall.communication);
    wall.rank_communication_beside = over_ranks(wall.communication_beside);
  }

  const auto flush0 = std::chrono::steady_clock::now();
  queue.drain();
  take_done();
  wall.writer_busy = queue.busy_seconds();
  // Every rank's parts, and the longest any output thread was busy (they write at once).
  if (ranks > 1) wall.bytes_written = comm::sum(wall.bytes_written), wall.writer_busy = comm::max(wall.writer_busy);
  if (root) telemetry.append_csv(telemetry_csv);
  if (root) {
    index->write_telemetry(telemetry.rows(), telemetry.peak_gbs(), telemetry.peak_source());
    index->commit();
  }
  wall.final_flush = seconds(flush0) + drained_at_last_step;
  // summary.json: what the run was and where its time went, then the telemetry's summary.
  nlohmann::ordered_json summary;
  summary["model"] = model->name();
  summary["strategy"] = model->strategy_name();
  summary["device"] = device;
  summary["steps"] = step;
  summary["restarted_from_step"] = restart ? nlohmann::ordered_json(ckpt.step) : nlohmann::ordered_json(nullptr);
  summary["interrupted"] = interrupted;
  summary["wall_seconds"] = wall.total();
  summary["seconds_per_step"] = wall.steps > 0 ? wall.steady / double(wall.steps) : 0.0;
  summary["wall"] = wall.json();
  summary["pinned_link_gbs"] = link_gbs;
  summary["conservation_name"] = cons.first;
  summary["conservation_value"] = cons.second;  // null when not finite
  summary.update(telemetry.summary_json());
  // Invalid UTF-8 (a device name, say) is replaced rather than refused: the summary is always written.
  if (root)
    write_file_atomically((fs::path(dir) / "summary.json").string(),
                          summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");

  if (!o.quiet) {
    std::printf("%s", telemetry.summary_table().c_str());
    if (counter_log) std::printf("%s(every profiled step in counters.csv)\n", counter_log->table().c_str());
    char conservation[96];
    std::snprintf(conservation, sizeof conservation, "%s = %+.3e", cons.first.c_str(), cons.second);
    // The steps this process took (a restart names the steps it continued from).
    const std::string from =
        restart ? " (steps " + std::to_string(first_step) + " to " + std::to_string(step) + ")" : std::string();
    std::printf("%s", wall.text(std::string(interrupted ? "stopped after" : "finished"), conservation + from).c_str());
  }
  if (!o.silent)
    std::printf(o.state_output ? "output: %s (snapshots.h5, snapshots.xmf, telemetry.csv, summary.json)\n"
                               : "output: %s (telemetry.csv, summary.json; snapshots.h5: the diagnostics only)\n",
                dir.c_str());
  if (interrupted && !o.silent)
    std::fprintf(stderr, "tiersim: stopped by %s at step %lld: its snapshot, checkpoint and summary are written\n",
                 signal_name(stop_sig), static_cast<long long>(step));
  RunResult result;
  // A signal that came while the last steps' output was written (the steps were all taken) still
  // ends the process with 128 + the signal, as the README promises.
  const int sig = std::max(stop_sig, stop_signal());
  result.exit_code = sig != 0 ? 128 + sig : 0;
  result.out_dir = dir;
  result.strategy = model->strategy_name();
  result.steps = step;
  result.wall_seconds = wall.total();
  result.telemetry = std::move(telemetry);
  return result;
}

}  // namespace tiersim
