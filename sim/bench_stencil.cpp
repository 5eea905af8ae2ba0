// `tiersim bench stencil`: the stencil update kernel for each tiling x coefficient space x
// radius at several grid sizes: ms per step, Gpoints/s, effective GB/s in compulsory bytes (each
// field read once and written once), % of the copy bandwidth measured in this process, and the
// bytes the variant moves by its own model. Times are CUDA-event times (on the CPU backend
// wall-clock times) of single launches of the update kernel (the halo fill is timed apart;
// "step %" counts it in): median of --reps after --warmup steps. A temporal pass (--tilings
// temporal) advances several steps: its figures are per step, so GB/s is bandwidth-equivalent
// (compulsory bytes of the steps it stands for over its time) and may exceed the copy bandwidth.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/host_memory.hpp"
#include "base/strategy.hpp"
#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"
#include "sim/bench.hpp"
#include "sim/bench_csv.hpp"
#include "sim/bench_inputs.hpp"
#include "sim/cli_checks.hpp"
#include "sim/model.hpp"

namespace tiersim {
namespace {

struct BenchStencilOptions {
  std::vector<int> sizes{256, 512};
  std::vector<int> radii{1, 2, 3, 4};
  std::vector<std::string> tilings{"none", "shared"};
  std::vector<std::string> coeffs{"constant", "global"};
  std::string equation = "heat";
  std::string precision = "fp32";
  std::string backend = "auto";
  int reps = 20, warmup = 3;
  StencilTuning tuning;
  std::string csv;
};

void run_bench_stencil(const BenchStencilOptions& o) {
  BenchCsv csv(o.csv,
               "n,radius,tiling,coeffs,equation,precision,ms,gpoints_s,gbs,pct_copy,bytes_compulsory,bytes_modelled,"
               "halo_ms,kernel,copy_gbs,step_pct_copy\n");
  Strategy s;
  s.backend = resolve_backend(parse_flag<Backend>(o.backend));
  s.precision = parse_flag<Precision>(o.precision);
  const bool gpu = s.backend == Backend::Cuda;
  const std::size_t scalar = s.precision == Precision::Fp64 ? 8 : 4;
  // Each size's initial fields (doubles) and, on the CPU, its engine's two levels of them fit in
  // host memory: checked before anything is printed or measured.
  const int nf = stencil_field_count(parse_equation(o.equation));
  for (int n : o.sizes)
    check_host_memory(double(n) * n * n * nf * double(sizeof(double) + (gpu ? 0 : 2 * scalar)),
                      "bench stencil --sizes " + std::to_string(n));
  double copy_gbs = 0;
  if (gpu) {
    const DeviceInfo d = query_device();  // usable: resolve_backend refused it otherwise
    std::printf("device: %s, %d SMs, compute capability %d.%d, L2 %s\n", d.name.c_str(), d.sm_count, d.cc_major,
                d.cc_minor, format_bytes(double(d.l2_bytes)).c_str());
    copy_gbs = measure_device_copy_gbs(true);
    std::printf("device copy bandwidth measured in this process (read+write bytes): %.0f GB/s\n", copy_gbs);
  } else {
    copy_gbs = measure_host_copy_gbs();
    std::printf("backend: cpu (tiling and coeffs do not apply); host copy bandwidth: %.1f GB/s\n", copy_gbs);
  }
  std::printf("equation %s, %s, one update kernel per step, %s, median of %d after %d warm-up\n", o.equation.c_str(),
              o.precision.c_str(), gpu ? "CUDA-event time per launch" : "wall-clock time per call", o.reps, o.warmup);
  std::printf(
      "compulsory bytes: each field read once + written once; model: bytes the variant requests from L2/DRAM;\n"
      "halo ms: the halo fill per step (0 where the update reads the wrapped ends itself); step %%: the whole\n"
      "step (update and fill) against the copy bandwidth\n\n");
  std::printf("%5s %2s %-8s %-9s %9s %9s %9s %7s %10s %9s %9s %7s  %s\n", "n", "R", "tiling", "coeffs", "ms/step",
              "Gpts/s", "GB/s", "% copy", "model MB", "model/cmp", "halo ms", "step %", "kernel");

  for (int n : o.sizes) {
    StencilProblem p;
    p.equation = parse_equation(o.equation);
    p.nx = p.ny = p.nz = n;
    for (int a = 0; a < 3; ++a) p.h[a] = 1.0 / n;
    std::vector<std::vector<double>> init;
    for (int f = 0; f < nf; ++f) init.push_back(random_field(p.points(), 17 + std::uint64_t(f), 0.5, 1.0));
    for (int R : o.radii) {
      p.radius = R;
      const double dt = 0.5 * stencil_dt_limit(p);
      for (const auto& ts : (gpu ? o.tilings : std::vector<std::string>{"none"}))
        for (const auto& cs : (gpu ? o.coeffs : std::vector<std::string>{"constant"})) {
          s.tiling = parse_flag<Tiling>(ts);
          s.coeffs = parse_flag<CoeffSpace>(cs);
          std::unique_ptr<StencilEngine> eng;
          try {
            eng = gpu ? make_stencil_cuda(s, p, o.tuning) : make_stencil_cpu(s, p);
            for (int f = 0; f < nf; ++f) eng->upload(f, init[std::size_t(f)]);
            eng->advance(dt, 1);
          } catch (const Error& e) {
            // A shape that does not fit this device or radius (a sweep's): say so, go on.
            std::printf("%5d %2d %-8s %-9s not run: %s\n", n, R, ts.c_str(), cs.c_str(), e.what());
            continue;
          }
          // A pass of --tiling temporal advances several steps (its record's work is points x
          // steps): its time per step is the pass's over the steps it advanced.
          constexpr int kAsManyAsFused = 1 << 20;
          for (int w = 0; w < o.warmup; ++w) eng->advance(dt, kAsManyAsFused);
          (void)eng->take_records();
          std::vector<double> ms, halo_ms;
          KernelRecord main;
          std::int64_t steps = 0;
          for (int r = 0; r < o.reps; ++r) steps += eng->advance(dt, kAsManyAsFused);
          for (const KernelRecord& k : eng->take_records()) {
            if (k.kernel.find("halo") != std::string::npos) {
              halo_ms.push_back(k.ms);
            } else {
              const double fused = k.work / double(p.points());
              ms.push_back(k.ms / fused);
              main = k;
              main.bytes_compulsory /= fused;
              main.bytes_modelled /= fused;
            }
          }
          const double t = median(ms);
          const double gpts = double(p.points()) / (t * 1e-3) / 1e9;
          const double gbs = main.bytes_compulsory / (t * 1e-3) / 1e9;
          const double pct = 100 * gbs / copy_gbs;
          // Halo fills per step (periodic: every step; fixed: once), and the whole step's share.
          const double th = halo_ms.empty() ? 0.0 : median(halo_ms) * double(halo_ms.size()) / double(steps);
          const double step_pct = 100 * main.bytes_compulsory / ((t + th) * 1e-3) / 1e9 / copy_gbs;
          std::printf("%5d %2d %-8s %-9s %9.4f %9.1f %9.0f %6.1f%% %10.1f %9.3f %9.4f %6.1f%%  %s\n", n, R, ts.c_str(),
                      cs.c_str(), t, gpts, gbs, pct, main.bytes_modelled / 1e6,
                      main.bytes_modelled / main.bytes_compulsory, th, step_pct, main.kernel.c_str());
          std::fflush(stdout);
          if (csv)
            csv.rows() << n << "," << R << "," << ts << "," << cs << "," << o.equation << "," << o.precision << "," << t
                       << "," << gpts << "," << gbs << "," << pct << "," << main.bytes_compulsory << ","
                       << main.bytes_modelled << "," << th << "," << main.kernel << "," << copy_gbs << "," << step_pct
                       << "\n";
        }
    }
    (void)scalar;
  }
  csv.write();
}

}  // namespace

void register_bench_stencil(CLI::App& bench) {
  auto o = std::make_shared<BenchStencilOptions>();
  CLI::App* sub = bench.add_subcommand("stencil", "Stencil update kernels: tiling x coeffs x radius x size");
  // Every value checked here, so that a bad one is refused before a device is set up (and on the
  // CPU backend, which runs no tiling or coefficient space, instead of being ignored).
  sub->add_option("--sizes", o->sizes, "points per axis (cubic grids)")
      ->delimiter(',')
      ->check(at_least(1))
      ->capture_default_str();
  sub->add_option("--radii", o->radii, "stencil radii 1..4")
      ->delimiter(',')
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  add_flag_values<Tiling>(sub, "--tilings", o->tilings, kStencil);
  add_flag_values<CoeffSpace>(sub, "--coeffs", o->coeffs);
  sub->add_option("--equation", o->equation, equation_choices(", "))
      ->check(CLI::IsMember(equation_names()))
      ->capture_default_str();
  add_flag_values<Precision>(sub, "--precision", o->precision);
  add_flag_values<Backend>(sub, "--backend", o->backend);
  sub->add_option("--reps", o->reps, "timed steps per figure (median)")->check(at_least(1))->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed steps first")->check(at_least(0))->capture_default_str();
  sub->add_option("--block-y", o->tuning.block_y,
                  "shared tiling: threads per block along y (x is one warp), 8 or 16 (0: per radius)")
      ->check(CLI::IsMember(std::vector<int>{0, 8, 16}))
      ->capture_default_str();
  sub->add_option("--z-chunk", o->tuning.z_chunk, "z planes per block (0: auto)")
      ->check(at_least(0))
      ->capture_default_str();
  sub->add_option("--temporal-steps", o->tuning.temporal_steps, "steps a temporal pass fuses (0: chosen)")
      ->check(at_least(0))
      ->capture_default_str();
  sub->add_option("--prefetch", o->tuning.prefetch, "shared tiling: planes loaded ahead, 2 or 4 (0: auto)")
      ->check(CLI::IsMember(std::vector<int>{0, 2, 4}))
      ->capture_default_str();
  sub->add_option("--csv", o->csv, "write the figures to this CSV file");
  sub->callback([o] { run_bench_stencil(*o); });
}

}  // namespace tiersim
