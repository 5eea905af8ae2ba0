// `tiersim bench l2`: what the L2 access-policy window (--l2-persist on) does per step, over
// problem sizes from well inside the L2 to several times larger. For each stencil equation and
// grid size: median time per step (halo fill + update, CUDA events) with the window off and
// on, the speedup, the window and hit ratio the engine set, the device's L2 size, persisting
// maximum and the carve-out it granted. N-body rows show the force step with positions in the
// window (--tiling none and shared). Each figure is from a fresh engine, off first, then on.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/l2_window.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/stencil_engine.hpp"
#include "sim/bench.hpp"
#include "sim/bench_csv.hpp"
#include "sim/bench_inputs.hpp"
#include "sim/cli_checks.hpp"
#include "base/strategy.hpp"

namespace tiersim {
namespace {

struct BenchL2Options {
  std::vector<std::string> equations = equation_names();  // every listed equation
  std::vector<int> sizes{96, 128, 160, 176, 192, 208, 224, 256, 320, 384};
  int radius = 1;
  std::string boundary = "periodic";
  std::string tiling = "shared", coeffs = "constant", precision = "fp32";
  std::vector<long long> nbody_sizes{262144, 1048576};
  std::vector<std::string> nbody_tilings{"none", "shared"};
  std::vector<std::string> windows{"auto"};   // stencil window placement (kernels/l2_window.hpp)
  std::vector<double> fills{kDefaultL2Fill};  // share of the carve-out the persisting lines fill
  long long persist_bytes = 0;
  int reps = 30, warmup = 5, nbody_reps = 3;
  std::string csv;
};

struct Measured {
  double ms_step = 0;
  double ms_update = 0;
  bool window = false;
  double window_bytes = 0, hit_ratio = 0;
  std::size_t carveout = 0;
};

// Steps of one engine: per step, the sum of its launches' times; medians.
Measured measure_stencil(const Strategy& s, const StencilProblem& p, const std::vector<std::vector<double>>& init,
                         double dt, const BenchL2Options& o) {
  auto eng = make_stencil_cuda(s, p);
  for (int f = 0; f < stencil_field_count(p.equation); ++f) eng->upload(f, init[std::size_t(f)]);
  for (int w = 0; w < o.warmup; ++w) eng->step(dt);
  (void)eng->take_records();
  Measured m;
  const L2ProbeState st = l2_probe();
  if (!st.live.empty()) m.carveout = st.live.back().carveout;
  for (int r = 0; r < o.reps; ++r) eng->step(dt);
  const std::vector<KernelRecord> recs = eng->take_records();
  std::vector<double> step_ms, upd_ms;
  double halo = 0;  // a step: its halo fill (periodic; fixed boundaries fill once) and its update
  for (const KernelRecord& r : recs) {
    if (r.kernel.starts_with("stencil_halo")) {
      halo += r.ms;
      continue;
    }
    step_ms.push_back(halo + r.ms);
    upd_ms.push_back(r.ms);
    halo = 0;
    m.window = r.l2_window;
    m.window_bytes = r.l2_window_bytes;
    m.hit_ratio = r.l2_hit_ratio;
  }
  m.ms_step = median(step_ms);
  m.ms_update = median(upd_ms);
  return m;
}

Bodies random_bodies(long long n) {
  Bodies b;
  b.resize(std::size_t(n));
#pragma omp parallel for
  for (long long i = 0; i < n; ++i) {
    const auto u = std::uint64_t(i) * 16;
    const auto k = std::size_t(i);
    b.pos[k] = {2 * unit_random(u) - 1, 2 * unit_random(u + 1) - 1, 2 * unit_random(u + 2) - 1};
    b.vel[k] = {0.1 * unit_random(u + 3) - 0.05, 0.1 * unit_random(u + 4) - 0.05, 0.1 * unit_random(u + 5) - 0.05};
    b.acc[k] = {unit_random(u + 6) - 0.5, unit_random(u + 7) - 0.5, unit_random(u + 8) - 0.5};
    b.mass[k] = (0.5 + unit_random(u + 9)) / double(n);
  }
  return b;
}

Measured measure_nbody(const Strategy& s, const Bodies& b, const BenchL2Options& o) {
  NbodyParams params;
  auto eng = make_nbody_cuda(s, int(b.size()), params);
  eng->upload(b);
  const double dt = 1e-4;
  auto step = [&] {
    eng->kick(0.5 * dt);
    eng->drift(dt);
    eng->compute_forces();
    eng->kick(0.5 * dt);
  };
  step();
  (void)eng->take_records();
  Measured m;
  const L2ProbeState st = l2_probe();
  if (!st.live.empty()) m.carveout = st.live.back().carveout;
  std::vector<double> step_ms, force_ms;
  for (int r = 0; r < o.nbody_reps; ++r) {
    step();
    double t = 0;
    for (const KernelRecord& k : eng->take_records()) {
      t += k.ms;
      if (k.kernel.find("forces") != std::string::npos) {
        force_ms.push_back(k.ms);
        m.window = k.l2_window, m.window_bytes = k.l2_window_bytes, m.hit_ratio = k.l2_hit_ratio;
      }
    }
    step_ms.push_back(t);
  }
  m.ms_step = median(step_ms);
  m.ms_update = median(force_ms);
  return m;
}

void run_bench_l2(const BenchL2Options& o) {
  BenchCsv csv(o.csv,
               "model,size,tiling,field_bytes,hot_bytes,window_bytes,carveout_bytes,hit_ratio,off_ms_step,on_ms_step,"
               "speedup,off_ms_kernel,on_ms_kernel,l2_bytes,persisting_max,device\n");
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("bench l2 needs a GPU: " + d.why_not);
  const L2Support sup = l2_persistence_support();
  std::printf("device: %s, %d SMs, compute capability %d.%d, driver %d, runtime %d\n", d.name.c_str(), d.sm_count,
              d.cc_major, d.cc_minor, d.driver_version, d.runtime_version);
  std::printf("L2 %s, persisting L2 maximum %s, access-policy window maximum %s\n",
              format_bytes(double(d.l2_bytes)).c_str(), format_bytes(double(d.persisting_l2_max)).c_str(),
              format_bytes(double(d.access_policy_window_max)).c_str());
  if (!sup.supported)
    std::printf("L2 persistence NOT available here: %s (the 'on' columns run without a window)\n", sup.why_not.c_str());
  std::printf(
      "stencils: %s, R=%d, tiling %s, coeffs %s, boundary %s; time per step = halo fill (periodic) + update, CUDA "
      "events, median of %d steps after %d warm-up; fresh engine per figure (off first, then on)\n",
      o.precision.c_str(), o.radius, o.tiling.c_str(), o.coeffs.c_str(), o.boundary.c_str(), o.reps, o.warmup);
  std::printf(
      "field MB: bytes one field's kernels touch (interior + halos); hot MB: what the window is for (pair: both\n"
      "ping-pong groups; output: the fields the next step reads); window MB: num_bytes set on the stream (padded "
      "grids); hit: hitRatio\n\n");
  std::printf("%-22s %9s %8s %8s %8s %8s %6s %9s %9s %8s %9s %9s\n", "model", "size", "field MB", "hot MB", "window",
              "carve", "hit", "off ms", "on ms", "speedup", "off upd", "on upd");

  auto row = [&](const std::string& model, const std::string& size, const std::string& tiling, double field, double hot,
                 const Measured& off, const Measured& on) {
    const double sp = on.ms_step > 0 ? off.ms_step / on.ms_step : 0;
    std::printf("%-22s %9s %8.1f %8.1f %8.1f %8.1f %6.3f %9.4f %9.4f %7.2fx %9.4f %9.4f\n", model.c_str(), size.c_str(),
                field / 1e6, hot / 1e6, on.window_bytes / 1e6, double(on.carveout) / 1e6, on.hit_ratio, off.ms_step,
                on.ms_step, sp, off.ms_update, on.ms_update);
    std::fflush(stdout);
    if (csv)
      csv.rows() << model << "," << size << "," << tiling << "," << field << "," << hot << "," << on.window_bytes << ","
                 << on.carveout << "," << on.hit_ratio << "," << off.ms_step << "," << on.ms_step << "," << sp << ","
                 << off.ms_update << "," << on.ms_update << "," << d.l2_bytes << "," << d.persisting_l2_max << ",\""
                 << d.name << "\"\n";
  };

  Strategy s;
  s.backend = Backend::Cuda;
  s.precision = parse_flag<Precision>(o.precision);
  s.tiling = parse_flag<Tiling>(o.tiling);
  s.coeffs = parse_flag<CoeffSpace>(o.coeffs);
  s.l2_persist_bytes = std::size_t(o.persist_bytes);
  const std::size_t scalar = s.precision == Precision::Fp64 ? 8 : 4;
  for (int n : o.sizes) {
    std::vector<std::vector<double>> init;
    for (const std::string& eq_name : o.equations) {
      StencilProblem p;
      p.equation = parse_equation(eq_name);
      p.nx = p.ny = p.nz = n;
      p.radius = o.radius;
      p.boundary = o.boundary == "fixed" ? Boundary::Fixed : Boundary::Periodic;
      const bool grid_units = with_equation(p.equation, [](auto eq) { return decltype(eq)::kGridUnits; });
      for (int a = 0; a < 3; ++a) p.h[a] = grid_units ? 1.0 : 1.0 / n;
      const int nf = stencil_field_count(p.equation);
      while (int(init.size()) < nf) init.push_back(random_field(p.points(), 17 + init.size(), 0.25, 0.5));
      const double dt = 0.5 * stencil_dt_limit(p);
      s.l2_persist = L2Persist::Off;
      const Measured off = measure_stencil(s, p, init, dt, o);
      for (const std::string& wname : o.windows)
        for (const double fill : o.fills) {
          // "<placement>" or "<placement>-normal" (the non-persisting share of the window misses as
          // normal lines instead of streaming ones).
          const bool normal = wname.size() > 7 && wname.substr(wname.size() - 7) == "-normal";
          const std::string place = normal ? wname.substr(0, wname.size() - 7) : wname;
          const StencilL2Target w = place == "auto"          ? StencilL2Target::Auto
                                    : place == "output"      ? StencilL2Target::Output
                                    : place == "output-half" ? StencilL2Target::OutputHalf
                                    : place == "fixed"       ? StencilL2Target::Fixed
                                                             : StencilL2Target::Pair;
          s.l2_persist = L2Persist::On;
          Strategy placed = s;
          placed.tuning.l2_target = w;
          placed.tuning.l2_miss_streaming = !normal;
          placed.tuning.l2_fill = fill;
          const Measured on = measure_stencil(placed, p, init, dt, o);
          const double field = double(n + 2 * o.radius) * (n + 2 * o.radius) * (n + 2 * o.radius) * double(scalar);
          const int fields = with_equation(p.equation, [](auto eq) { return decltype(eq)::kFields; });
          const double hot = field * fields * (w == StencilL2Target::Pair ? 2 : 1);
          const std::string eq = kernel_tag(p.equation);
          std::string label = o.windows.size() > 1 ? eq + "/" + wname : eq;
          if (o.fills.size() > 1) {
            char f[16];
            std::snprintf(f, sizeof f, "@%.2f", fill);
            label += f;
          }
          row(label, std::to_string(n) + "^3", o.tiling, field, hot, off, on);
        }
    }
  }
  for (long long n : o.nbody_sizes) {
    if (n <= 0) continue;  // `--nbody-sizes ''` (or 0): no N-body rows
    const Bodies b = random_bodies(n);
    for (const std::string& t : o.nbody_tilings) {
      Strategy ns;
      ns.backend = Backend::Cuda;
      ns.layout = Layout::SoA;
      ns.precision = Precision::Fp32;
      ns.tiling = parse_flag<Tiling>(t);
      ns.l2_persist_bytes = std::size_t(o.persist_bytes);
      ns.l2_persist = L2Persist::Off;
      const Measured off = measure_nbody(ns, b, o);
      ns.l2_persist = L2Persist::On;
      const Measured on = measure_nbody(ns, b, o);
      const double pos = double(n) * 16;  // x y z m, fp32
      row("nbody/" + t, std::to_string(n), t, pos, pos, off, on);
    }
  }
  std::printf("\n'upd' columns: the stencil update kernel alone, or the N-body force kernel alone (ms)\n");
  csv.write();
}

}  // namespace

void register_bench_l2(CLI::App& bench) {
  auto o = std::make_shared<BenchL2Options>();
  CLI::App* sub = bench.add_subcommand("l2", "L2 persistence window off vs on over problem sizes (stencils, N-body)");
  // Every value checked here, so that a bad one is refused before the device is set up.
  sub->add_option("--equations", o->equations, equation_choices(", "))
      ->delimiter(',')
      ->check(CLI::IsMember(equation_names()))
      ->capture_default_str();
  sub->add_option("--sizes", o->sizes, "grid points per axis (cubic grids)")
      ->delimiter(',')
      ->check(at_least(1))
      ->capture_default_str();
  sub->add_option("--stencil-window", o->windows,
                  "auto (wave: fixed, else output), pair, output, output-half, fixed, each optionally with -normal "
                  "(misses as normal lines, not streaming): where the stencil window goes")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "pair", "output", "output-half", "fixed", "auto-normal", "pair-normal",
                             "output-normal", "output-half-normal", "fixed-normal"}))
      ->capture_default_str();
  sub->add_option("--fill", o->fills,
                  "share(s) of the carve-out the persisting lines may fill, each in (0, 1]: carve-out = hot set / fill")
      ->delimiter(',')
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  sub->add_option("--radius", o->radius, "stencil radius 1..4")->check(CLI::Range(1, 4))->capture_default_str();
  sub->add_option("--boundary", o->boundary, "periodic (halos filled every step) or fixed (filled once)")
      ->check(CLI::IsMember({"periodic", "fixed"}))
      ->capture_default_str();
  add_flag_values<Tiling>(sub, "--tiling", o->tiling, kStencil);
  add_flag_values<CoeffSpace>(sub, "--coeffs", o->coeffs);
  add_flag_values<Precision>(sub, "--precision", o->precision);
  sub->add_option("--nbody-sizes", o->nbody_sizes, "body counts for the N-body rows ('' or 0: none)")
      ->delimiter(',')
      ->check(at_least(0, true))
      ->capture_default_str();
  add_flag_values<Tiling>(sub, "--nbody-tilings", o->nbody_tilings, kNbody);
  sub->add_option("--l2-persist-bytes", o->persist_bytes, "window/carve-out size (0: the hot set)")
      ->check(at_least(0))
      ->capture_default_str();
  sub->add_option("--reps", o->reps, "timed steps per figure (median)")->check(at_least(1))->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed steps first")->check(at_least(0))->capture_default_str();
  sub->add_option("--nbody-reps", o->nbody_reps, "timed N-body steps per figure")
      ->check(at_least(1))
      ->capture_default_str();
  sub->add_option("--csv", o->csv, "write the figures to this CSV file");
  sub->callback([o] { run_bench_l2(*o); });
}

}  // namespace tiersim
