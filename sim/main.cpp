// tiersim: the command line. Subcommands: run, info, bench, keys. Every error the user can
// cause ends here as one line "tiersim: error: ..." and a non-zero exit.
#include <hdf5.h>
#include <unistd.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/transport.hpp"
#include "sim/bench.hpp"
#include "sim/case.hpp"
#include "sim/cli_checks.hpp"
#include "sim/compare.hpp"
#include "base/comm.hpp"
#include "base/error.hpp"
#include "base/printable.hpp"
#include "base/strategy.hpp"
#include "sim/run.hpp"
#include "sim/stop_signal.hpp"

namespace {

// The compiler this binary was built with (the library is built with the same one).
std::string compiler_text() {
  char buf[64];
#if defined(__clang__)
  std::snprintf(buf, sizeof buf, "Clang %d.%d.%d", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  std::snprintf(buf, sizeof buf, "GCC %d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  std::snprintf(buf, sizeof buf, "an unknown C++ compiler");
#endif
  return buf;
}

// This process's GPU: the device it selected and what the kernels are chosen from.
std::string gpu_text() {
  using namespace tiersim;
  const DeviceInfo d = query_device();
  if (!d.usable) return "GPU: none usable (" + d.why_not + ")\n";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "GPU %d: %s, compute capability %d.%d, %d SMs, %.0f MHz\n"
                "  memory: %s total, %s free\n"
                "  L2: %s; persisting L2 max %s; access-policy window max %s\n"
                "  shared memory: %s per block (opt-in), %s per SM\n"
                "  driver %d, runtime %d\n",
                d.ordinal, d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.clock_khz / 1000.0,
                format_bytes(double(d.global_mem)).c_str(), format_bytes(double(d.free_mem)).c_str(),
                format_bytes(double(d.l2_bytes)).c_str(), format_bytes(double(d.persisting_l2_max)).c_str(),
                format_bytes(double(d.access_policy_window_max)).c_str(),
                format_bytes(double(d.smem_optin_per_block)).c_str(), format_bytes(double(d.smem_per_sm)).c_str(),
                d.driver_version, d.runtime_version);
  return buf;
}

// The build, then the GPU; under mpirun rank 0 prints the build once and every rank's GPU (each
// takes its own: select_device), in rank order, named by rank and host.
void print_info() {
  using namespace tiersim;
  if (comm::is_root()) {
    std::printf("tiersim %s\n", TIERSIM_VERSION);
    // What someone reporting numbers needs to say about the build.
    unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
    H5get_libversion(&h5_major, &h5_minor, &h5_release);  // the library linked, not the headers
    const std::string build_type = TIERSIM_BUILD_TYPE;
    std::printf("build: %s, %s, HDF5 %u.%u.%u\n", build_type.empty() ? "no build type" : build_type.c_str(),
                compiler_text().c_str(), h5_major, h5_minor, h5_release);
    std::printf("backends: CUDA %s", cuda_compiled() ? "compiled in" : "not compiled in");
#ifdef TIERSIM_CUDA_ARCHS
    std::printf(" (architectures %s)", TIERSIM_CUDA_ARCHS);
#endif
#ifdef TIERSIM_HAVE_VTK
    std::printf(", VTK output on");
#else
    std::printf(", VTK output off");
#endif
    std::printf(", OpenMP threads %d\n", omp_get_max_threads());
    std::printf("ranks: %s\n", comm::library().c_str());
    std::printf("transport between GPUs: %s\n", nccl_library().c_str());
  }
  if (comm::size() == 1) {
    std::printf("%s", gpu_text().c_str());
    return;
  }
  constexpr std::size_t kLen = 2048;  // one rank's text, NUL-padded
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string mine = "rank " + std::to_string(comm::rank()) + " (" + host + "): " + gpu_text();
  std::vector<char> send(kLen, '\0'), all(comm::is_root() ? kLen * std::size_t(comm::size()) : 0);
  mine.copy(send.data(), kLen - 1);
  comm::gather(send.data(), kLen, all.data());
  if (comm::is_root())
    for (int r = 0; r < comm::size(); ++r) std::printf("%s", all.data() + kLen * std::size_t(r));
}

// CLI11 reports an unknown subcommand ("tiersim frobnicate") as a missing one: name the word it
// did not know and the subcommands there are, at the level where one was required.
std::string subcommand_error(const CLI::App* app, const CLI::Error& e) {
  if (e.get_name() != "RequiredError" || std::string(e.what()).find("subcommand") == std::string::npos) return e.what();
  const CLI::App* at = app;  // the deepest subcommand given (tiersim bench ...)
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  std::string path, names;  // the subcommand's words ("bench: "); the caller prefixes "tiersim: error: "
  for (const CLI::App* p = at; p && p->get_parent(); p = p->get_parent())
    path.insert(0, p->get_name() + (path.empty() ? ": " : " "));
  for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  std::string unknown;
  for (const std::string& arg : at->remaining())
    if (!arg.empty() && arg[0] != '-') {
      unknown = arg;
      break;
    }
  if (unknown.empty()) return path + "a subcommand is required (" + names + ")";
  return path + "unknown subcommand '" + unknown + "' (expected " + names + ")";
}

// The value of an integer flag as given (text), checked against [min, max]: a refusal names the
// flag and the text, not the case key it overrides nor a value clamped on the way.
long long integer_flag(const std::string& flag, const std::string& text, double min, double max) {
  long long v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc() && p == end && double(v) >= min && double(v) <= max) return v;
  if (ec == std::errc::invalid_argument || p != end)
    throw tiersim::Error(flag + ": '" + tiersim::printable(text, 40) + "' is not an integer");
  if (ec == std::errc() && v < 0 && min >= 0) throw tiersim::Error(flag + ": must be >= 0, not " + text);
  char range[96];
  std::snprintf(range, sizeof range, " is out of range (must be >= %.0f and <= %.0f)", min, max);
  throw tiersim::Error(flag + ": " + tiersim::printable(text, 40) + range);
}

// The range of a case key, for the flag that overrides it.
const tiersim::KeySpec& key_spec(const std::string& key) {
  for (const auto& k : tiersim::case_schema())
    if (k.key == key) return k;
  throw tiersim::Error("no case key " + key);
}

}  // namespace

int run_command_line(int argc, char** argv);

int main(int argc, char** argv) {
  // First thing: from here on SIGINT and SIGTERM are requests that a run honours where stopping
  // leaves everything whole (sim/stop_signal.hpp), never a silent death in the middle of set-up.
  tiersim::install_stop_handlers();
  // Under an MPI launcher each process is one rank of the run (base/comm.hpp); each takes a GPU.
  try {
    tiersim::comm::init(&argc, &argv);
  } catch (const tiersim::Error& e) {
    std::fprintf(stderr, "tiersim: error: %s\n", e.what());
    return 1;
  }
  tiersim::select_device(tiersim::comm::local_rank());
  const int code = run_command_line(argc, argv);
  tiersim::close_transport();
  tiersim::comm::finalize();
  return code;
}

int run_command_line(int argc, char** argv) {
  CLI::App app{"tiersim: N-body and stencil simulations that make the GPU memory hierarchy visible"};
  app.set_version_flag("--version", std::string("tiersim ") + TIERSIM_VERSION);
  app.require_subcommand(1);
  // Parse errors are one line too (CLI11's default adds a second "Run with --help" line).
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return std::string("tiersim: error: ") + subcommand_error(a, e) + " (see --help)\n";
  });

  // run
  tiersim::RunOptions ro;
  std::map<std::string, std::string> flags;  // strategy flag key -> value given
  std::string formats;
  std::string steps, l2_bytes;
  std::vector<std::string> sets;
  auto* run = app.add_subcommand("run", "Run a case file");
  auto* case_opt = run->add_option("case", ro.case_path, "case file (TOML)");
  auto* restart_opt =
      run->add_option("--restart", ro.restart_dir,
                      "continue the run in DIR from its last checkpoint (the case stored there; --steps extends it)")
          ->excludes(case_opt);
  tiersim::for_each_flag([&](auto flag, auto) {
    using F = decltype(flag);
    run->add_option(tiersim::flag_option(F::key), flags[F::key], tiersim::flag_choices(flag) + ": " + F::help)
        ->check(CLI::IsMember(tiersim::flag_names(flag)));
  });
  auto* l2_opt = run->add_option("--l2-persist-bytes", l2_bytes, "bytes of the L2 window (0: the hot set)");
  auto* steps_opt = run->add_option("--steps", steps, "number of steps (overrides run.steps)");
  auto* out_opt = run->add_option("--out", ro.out_dir, "output directory (default out/<case name>)");
  // One value per occurrence: a vector option would otherwise also take the case path after it
  // (`run --set nbody.count=64 cases/plummer.toml`).
  run->add_option("--set", sets, "override a case key: section.key=value (repeatable, one per --set)")
      ->take_all()
      ->allow_extra_args(false);
  auto* format_opt =
      run->add_option("--format", formats,
                      "what to write beside snapshots.h5 (always written): xdmf (snapshots.xmf, the default), "
                      "vtk (.vti/.vtp series and .pvd files), or xdmf,vtk");
  run->add_option("--counters", ro.counters_every,
                  "read DRAM bytes, L2 hit rate and duration per kernel through CUPTI for one step every N "
                  "(that step is replayed: its timings are left out of telemetry.csv)")
      ->check(tiersim::at_least(0));
  run->add_flag("--remeasure-bandwidth", ro.remeasure_bandwidth,
                "measure the device copy bandwidth and FMA throughput again (cached per device in ~/.cache/tiersim)");
  run->add_flag("--force", ro.force, "replace an existing output directory");
  run->add_flag("--quiet,-q", ro.quiet, "no progress line or summary table");
  bool no_snapshots = false;
  run->add_flag("--no-snapshots", no_snapshots,
                "write no snapshots or checkpoints: telemetry.csv, summary.json and the diagnostics' time series "
                "in snapshots.h5 only (figures only: a scaling study, a benchmark; such a run cannot be restarted)")
      ->excludes(restart_opt);

  auto* info = app.add_subcommand("info", "Build options, OpenMP threads and GPU properties");
  auto* keys = app.add_subcommand("keys", "Every case-file key, its type, default and meaning (Markdown)");
  bool keys_toml = false;
  keys->add_flag("--toml", keys_toml,
                 "print a runnable example case instead, every key commented with its meaning, type, range and "
                 "default (cases/example.toml)");
  tiersim::CompareOptions co;
  tiersim::register_compare(app, co);
  auto* bench = app.add_subcommand("bench", "Benchmarks of the kernels, by model");
  bench->require_subcommand(1);
  // A benchmark measures one GPU (or the host) from one process: under mpirun every rank would
  // measure its own and print it, and write the same --csv file.
  bench->preparse_callback([](std::size_t) {
    if (tiersim::comm::size() > 1)
      throw tiersim::Error(
          "tiersim bench runs in one process (it measures one GPU, or this host); run it without "
          "mpirun (here " +
          std::to_string(tiersim::comm::size()) + " ranks)");
  });
  tiersim::register_bench_nbody(*bench);
  tiersim::register_bench_stencil(*bench);
  tiersim::register_bench_l2(*bench);

  try {
    app.parse(argc, argv);  // bench subcommands run from their callbacks, inside parse
    if (*info) {
      print_info();
      return 0;
    }
    if (*keys) {
      std::printf("%s", (keys_toml ? tiersim::case_example_toml() : tiersim::case_keys_markdown()).c_str());
      return 0;
    }
    if (app.got_subcommand("compare")) return tiersim::run_compare(co);
    if (*run) {
      // An empty path is a mistake (an unset shell variable), not a request for the default.
      if (out_opt->count() > 0 && ro.out_dir.empty())
        throw tiersim::Error("--out: empty path (give a directory, or leave --out out for out/<case name>)");
      if (restart_opt->count() > 0 && ro.restart_dir.empty())
        throw tiersim::Error("--restart: empty path (give a run directory)");
      if (case_opt->count() > 0 && ro.case_path.empty()) throw tiersim::Error("run: empty case file path");
      if (ro.case_path.empty() && ro.restart_dir.empty())
        throw tiersim::Error("run: give a case file or --restart DIR");
      // Flags first, then --set: the more explicit override wins.
      for (const auto& [key, v] : flags)
        if (!v.empty()) ro.overrides.push_back("strategy." + key + "=\"" + v + "\"");
      if (l2_opt->count() > 0) {
        const auto& k = key_spec("strategy.l2_persist_bytes");
        ro.overrides.push_back(k.key + "=" +
                               std::to_string(integer_flag("--l2-persist-bytes", l2_bytes, k.min, k.max)));
      }
      if (steps_opt->count() > 0) {
        const auto& k = key_spec("run.steps");
        ro.overrides.push_back(k.key + "=" + std::to_string(integer_flag("--steps", steps, k.min, k.max)));
      }
      for (const auto& s : sets) ro.overrides.push_back(s);
      if (format_opt->count() > 0) ro.formats = formats;  // given empty: refused by parse_formats
      ro.state_output = !no_snapshots;
      return tiersim::run_case(ro).exit_code;
    }
    // bench subcommands run from their own callbacks.
    return 0;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tiersim::Error& e) {
    // Every rank meets the same error (sim/run.cpp agrees on them): the first rank says it.
    if (!tiersim::comm::is_root()) return 1;
    // Messages quote input (paths, values, lines of files): never a raw byte of it on the terminal.
    std::fprintf(stderr, "tiersim: error: %s\n", tiersim::printable(e.what(), 4096).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tiersim: error: out of host memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tiersim: error: %s\n", tiersim::printable(e.what(), 4096).c_str());
    return 1;
  }
}
