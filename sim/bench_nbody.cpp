// `tiersim bench nbody`: the force kernels for each layout x tiling x precision at several N
// (ms per evaluation, interactions/s, GFLOP/s at 20 flops per interaction, and the same pass with
// the potential energy summed beside the forces, as on diagnostics steps: its ms and its extra
// cost in %), and kick/drift at a large N against the device copy bandwidth measured in the same
// process. Times are CUDA-event
// times of single launches: median of --reps after --warmup launches.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"
#include "sim/bench.hpp"
#include "sim/bench_csv.hpp"
#include "sim/bench_inputs.hpp"
#include "sim/cli_checks.hpp"
#include "base/strategy.hpp"

namespace tiersim {
namespace {

struct BenchNbodyOptions {
  std::vector<long long> sizes{65536, 262144, 1048576};
  // Every value of each flag's table (base/strategy.hpp) unless told otherwise.
  std::vector<std::string> layouts = flag_names<Layout>();
  std::vector<std::string> tilings = flag_names<Tiling>(kNbody);
  std::vector<std::string> precisions = flag_names<Precision>();
  std::vector<std::string> fp64_layouts{"float4"};
  long long stream_size = 1LL << 24;
  int reps = 5, warmup = 1;
  int block = 0, bodies_per_thread = 0;
  bool sweep = false;
  std::string csv;
};

double unit(std::uint64_t i, int k) { return unit_random(i * 16 + std::uint64_t(k)); }

// Random bodies in a unit cube (never zeros), generated in parallel.
Bodies bench_bodies(long long n) {
  Bodies b;
  b.resize(std::size_t(n));
#pragma omp parallel for
  for (long long i = 0; i < n; ++i) {
    const auto u = std::uint64_t(i);
    const auto s = std::size_t(i);
    b.pos[s] = {2 * unit(u, 0) - 1, 2 * unit(u, 1) - 1, 2 * unit(u, 2) - 1};
    b.vel[s] = {0.1 * unit(u, 3) - 0.05, 0.1 * unit(u, 4) - 0.05, 0.1 * unit(u, 5) - 0.05};
    b.acc[s] = {unit(u, 6) - 0.5, unit(u, 7) - 0.5, unit(u, 8) - 0.5};
    b.mass[s] = (0.5 + unit(u, 9)) / double(n);
  }
  return b;
}

double median_ms(const std::vector<KernelRecord>& recs, std::size_t skip) {
  std::vector<double> ms;
  for (std::size_t i = skip; i < recs.size(); ++i) ms.push_back(recs[i].ms);
  return median(ms);
}

void run_bench_nbody(const BenchNbodyOptions& o) {
  BenchCsv csv(o.csv,
               "device,kernel,precision,layout,tiling,n,block,bodies_per_thread,ms,interactions_per_s,gflops,"
               "gbs_compulsory,pct_copy,gbs_modelled,copy_gbs\n");
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("bench nbody needs a GPU: " + d.why_not);
  std::printf("device: %s, %d SMs, compute capability %d.%d, %.0f MHz, L2 %s, driver %d, runtime %d\n", d.name.c_str(),
              d.sm_count, d.cc_major, d.cc_minor, d.clock_khz / 1000.0, format_bytes(double(d.l2_bytes)).c_str(),
              d.driver_version, d.runtime_version);
  const double copy_gbs = measure_device_copy_gbs(true);
  std::printf("device copy bandwidth (float4 copy kernel, 1 GiB each way, read+write bytes, median of 10): %.0f GB/s\n",
              copy_gbs);
  std::printf("timing: CUDA events per launch, median of %d after %d warm-up\n\n", o.reps, o.warmup);

  auto csv_row = [&](const std::string& kernel, const std::string& prec, const std::string& lay, const std::string& til,
                     long long n, const NbodyTuning& t, double ms, double ips, double gflops, double gbs, double pct,
                     double gbs_mod) {
    if (!csv) return;
    char buf[512];
    std::snprintf(buf, sizeof buf, "\"%s\",%s,%s,%s,%s,%lld,%d,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%.6g,%.6g\n", d.name.c_str(),
                  kernel.c_str(), prec.c_str(), lay.c_str(), til.c_str(), n, t.block, t.bodies_per_thread, ms, ips,
                  gflops, gbs, pct, gbs_mod, copy_gbs);
    csv.rows() << buf;
  };

  NbodyParams params;
  params.softening = 0.01;
  const NbodyTuning tuning{o.block, o.bodies_per_thread};

  auto time_forces = [&](const Strategy& s, long long n, const Bodies& b, const NbodyTuning& t,
                         bool with_potential = false) {
    auto eng = make_nbody_cuda(s, int(n), params, t);
    eng->upload(b);
    for (int r = 0; r < o.warmup + o.reps; ++r) eng->compute_forces(with_potential);
    const auto recs = eng->take_records();
    const double ms = median_ms(recs, std::size_t(o.warmup));
    const double ips = double(n) * double(n) / (ms * 1e-3);
    return std::make_pair(ms, ips);
  };

  // ---- forces ----
  std::printf("%-5s %-7s %-7s %9s %10s %12s %10s %10s %7s   (block, bodies/thread: %s)\n", "prec", "layout", "tiling",
              "N", "ms/eval", "inter/s", "GFLOP/s", "+pot ms", "+pot %",
              tuning.block || tuning.bodies_per_thread ? "as given, 0 = auto" : "auto for the device and N");
  for (const auto& ps : o.precisions) {
    const Precision prec = parse_flag<Precision>(ps, "--precision");
    const auto& lays =
        prec == Precision::Fp64 && !o.fp64_layouts.empty() && o.fp64_layouts[0] != "all" ? o.fp64_layouts : o.layouts;
    for (long long n : o.sizes) {
      const Bodies b = bench_bodies(n);
      for (const auto& ls : lays)
        for (const auto& ts : o.tilings) {
          Strategy s;
          s.backend = Backend::Cuda;
          s.layout = parse_flag<Layout>(ls, "--layouts");
          s.tiling = parse_flag<Tiling>(ts, "--tilings");
          s.precision = prec;
          const auto [ms, ips] = time_forces(s, n, b, tuning);
          const double pot_ms = time_forces(s, n, b, tuning, true).first;
          std::printf("%-5s %-7s %-7s %9lld %10.4f %12.4g %10.1f %10.4f %6.1f%%\n", ps.c_str(), ls.c_str(), ts.c_str(),
                      n, ms, ips, ips * kFlopsPerInteraction * 1e-9, pot_ms, 100.0 * (pot_ms / ms - 1.0));
          std::fflush(stdout);
          csv_row("nbody_forces", ps, ls, ts, n, tuning, ms, ips, ips * kFlopsPerInteraction * 1e-9, 0, 0, 0);
          const double pot_ips = double(n) * double(n) / (pot_ms * 1e-3);
          csv_row("nbody_forces_potential", ps, ls, ts, n, tuning, pot_ms, pot_ips,
                  pot_ips * kFlopsPerInteraction * 1e-9, 0, 0, 0);
        }
    }
  }

  // ---- optional sweep of block x bodies per thread (first layout/tiling/precision, largest N) ----
  if (o.sweep) {
    const long long n = *std::max_element(o.sizes.begin(), o.sizes.end());
    const Bodies b = bench_bodies(n);
    Strategy s;
    s.backend = Backend::Cuda;
    s.layout = parse_flag<Layout>(o.layouts.front(), "--layouts");
    s.tiling = parse_flag<Tiling>(o.tilings.back(), "--tilings");
    for (const auto& ps : o.precisions) {
      s.precision = parse_flag<Precision>(ps, "--precision");
      std::printf("\nsweep %s/%s/%s N=%lld:\n%6s %4s %10s %12s\n", o.layouts.front().c_str(), ps.c_str(),
                  o.tilings.back().c_str(), n, "block", "K", "ms/eval", "inter/s");
      for (int k : {1, 2, 4, 8})
        for (int blk : {64, 128, 256, 512}) {
          if (blk > (s.precision == Precision::Fp32 ? 512 : 256)) continue;
          const auto [ms, ips] = time_forces(s, n, b, NbodyTuning{blk, k});
          std::printf("%6d %4d %10.4f %12.4g\n", blk, k, ms, ips);
          std::fflush(stdout);
          csv_row("nbody_forces_sweep", ps, o.layouts.front(), o.tilings.back(), n, NbodyTuning{blk, k}, ms, ips,
                  ips * kFlopsPerInteraction * 1e-9, 0, 0, 0);
        }
    }
  }

  // ---- kick and drift: memory-bound, against the copy bandwidth ----
  if (o.stream_size > 0) {
    const long long n = o.stream_size;
    std::printf("\nkick/drift at N=%lld (compulsory bytes: fields read + written once; %% of the %.0f GB/s copy)\n", n,
                copy_gbs);
    std::printf("%-5s %-7s %-6s %9s %10s %8s %12s %10s\n", "prec", "layout", "kernel", "ms", "GB/s", "% copy",
                "bytes/body", "model GB/s");
    const Bodies b = bench_bodies(n);
    for (const auto& ps : o.precisions)
      for (const auto& ls : o.layouts) {
        Strategy s;
        s.backend = Backend::Cuda;
        s.layout = parse_flag<Layout>(ls, "--layouts");
        s.precision = parse_flag<Precision>(ps, "--precision");
        auto eng = make_nbody_cuda(s, int(n), params, tuning);
        eng->upload(b);
        for (int kernel = 0; kernel < 2; ++kernel) {
          for (int r = 0; r < o.warmup + 2 * o.reps; ++r) kernel == 0 ? eng->kick(1e-6) : eng->drift(1e-6);
          const auto recs = eng->take_records();
          const double ms = median_ms(recs, std::size_t(o.warmup));
          const double gbs = recs.front().bytes_compulsory / (ms * 1e-3) * 1e-9;
          const double gbs_mod = recs.front().bytes_modelled / (ms * 1e-3) * 1e-9;
          std::printf("%-5s %-7s %-6s %9.4f %10.0f %7.1f%% %5.0f / %-5.0f %10.0f\n", ps.c_str(), ls.c_str(),
                      kernel == 0 ? "kick" : "drift", ms, gbs, 100.0 * gbs / copy_gbs,
                      recs.front().bytes_compulsory / double(n), recs.front().bytes_modelled / double(n), gbs_mod);
          std::fflush(stdout);
          csv_row(kernel == 0 ? "nbody_kick" : "nbody_drift", ps, ls, "-", n, tuning, ms, 0, 0, gbs,
                  100.0 * gbs / copy_gbs, gbs_mod);
        }
      }
  }
  csv.write();
}

}  // namespace

void register_bench_nbody(CLI::App& bench) {
  auto o = std::make_shared<BenchNbodyOptions>();
  CLI::App* sub = bench.add_subcommand("nbody", "N-body force, kick and drift kernels on the GPU");
  // Every value checked here, so that a bad one is refused before the device is set up.
  sub->add_option("--sizes", o->sizes, "body counts for the force kernels")
      ->delimiter(',')
      ->check(at_least(1))
      ->capture_default_str();
  add_flag_values<Layout>(sub, "--layouts", o->layouts);
  add_flag_values<Tiling>(sub, "--tilings", o->tilings, kNbody);
  add_flag_values<Precision>(sub, "--precision", o->precisions);
  std::vector<std::string> fp64_choices = flag_names<Layout>();
  fp64_choices.emplace_back("all");
  sub->add_option("--fp64-layouts", o->fp64_layouts, "layouts measured in fp64 ('all': as --layouts)")
      ->delimiter(',')
      ->check(CLI::IsMember(fp64_choices))
      ->capture_default_str();
  sub->add_option("--stream-size", o->stream_size, "N for kick/drift (0: skip)")
      ->check(at_least(0))
      ->capture_default_str();
  sub->add_option("--reps", o->reps, "timed launches per figure (median)")->check(at_least(1))->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed launches first")->check(at_least(0))->capture_default_str();
  sub->add_option("--block", o->block, "force kernel block size (0: auto)")->check(at_least(0))->capture_default_str();
  sub->add_option("--bodies-per-thread", o->bodies_per_thread, "force kernel bodies per thread: 1,2,4,8 (0: auto)")
      ->check(CLI::IsMember(std::vector<int>{0, 1, 2, 4, 8}))
      ->capture_default_str();
  sub->add_flag("--sweep", o->sweep, "also sweep block x bodies per thread at the largest size");
  sub->add_option("--csv", o->csv, "write the figures to this CSV file");
  sub->callback([o] { run_bench_nbody(*o); });
}

}  // namespace tiersim
