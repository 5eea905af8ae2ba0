// --tiling temporal as a run takes it: a stencil model advanced the way the run loop advances it
// (as many steps as the next diagnostics, snapshot or end allow: here diagnostics every 7 steps
// and snapshots every 10, so passes are cut short, down to single steps, which run the single-step
// kernel) ends where 100 single steps of --tiling shared end. Heat and wave (R = 1..4) and
// Gray-Scott (R = 1), fp32 and fp64, periodic and fixed boundaries, odd grid sizes (partial
// tiles), the wave driven by its point source (single steps while the wavelet adds anything,
// fused passes after).
// Heat and wave: bit for bit (the same point update on the same neighbour values in the same
// order). Gray-Scott: within 1e-5 (fp32) / 1e-12 (fp64) relative, because nvcc may contract the
// multiply-adds around u v^2 differently in the two kernels (stencil_temporal.cu says why).
// Skipped, with the reason, where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "kernels/device_info.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"

#if TIERSIM_HAVE_CUDA
#include "kernels/cuda/stencil_temporal.cuh"
#endif

using namespace tiersim;

namespace {

struct RunCase {
  std::string equation;
  int radius;
  bool fp64;
  bool fixed;
};

// How gtest names a case in its output.
void PrintTo(const RunCase& rc, std::ostream* os) {
  *os << rc.equation << " R=" << rc.radius << (rc.fp64 ? " fp64" : " fp32") << (rc.fixed ? " fixed" : " periodic");
}

// `steps`: stencil.temporal_steps (0: the engine's choice).
std::string case_text(const RunCase& rc, const std::string& tiling, int steps = 0) {
  std::string dt = rc.equation == "heat" ? "1.5e-5" : rc.equation == "wave" ? "1e-3" : "0.4";
  std::string t = "[run]\nmodel = \"stencil\"\ndt = " + dt + "\n[strategy]\nbackend = \"cuda\"\nprecision = \"" +
                  std::string(rc.fp64 ? "fp64" : "fp32") + "\"\ntiling = \"" + tiling +
                  "\"\n[grid]\nnx = 37\nny = 29\n" + "nz = 23\nradius = " + std::to_string(rc.radius) +
                  "\nboundary = \"" + (rc.fixed ? "fixed" : "periodic") + "\"\n";
  // Fixed boundaries hold 0.25 (Gray-Scott: U 0.7 and V 0.2, values of their own).
  if (rc.equation != "gray-scott") t += "boundary_value = 0.25\n";
  if (rc.equation == "gray-scott") t += "length = 37.0\n";
  t += "[stencil]\nequation = \"" + rc.equation + "\"\n";
  if (steps > 0) t += "temporal_steps = " + std::to_string(steps) + "\n";
  if (rc.equation == "gray-scott" && rc.fixed) t += "[gray_scott]\nboundary_u = 0.7\nboundary_v = 0.2\n";
  // A short wavelet (alive for about 50 of the 100 steps), so that both regimes are exercised.
  if (rc.equation == "wave") t += "[wave]\ninitial = \"source\"\nsource_frequency = 200.0\n";
  return t;
}

// 100 steps as the run loop takes them; returns the passes that fused more than one step.
int run_100(Model& m, double dt) {
  constexpr std::int64_t kSteps = 100, kDiag = 7, kSnap = 10;
  int fused = 0;
  for (std::int64_t step = 0; step < kSteps;) {
    const std::int64_t horizon = std::min({kSteps - step, kDiag - step % kDiag, kSnap - step % kSnap});
    const std::int64_t n = m.advance(dt, horizon);
    EXPECT_GE(n, 1);
    EXPECT_LE(n, horizon) << "a pass ran past step " << step + horizon;
    fused += n > 1;
    step += n;
    if (step % kDiag == 0) (void)m.observe();  // as the diagnostics read the state between passes
  }
  return fused;
}

class TemporalRun : public ::testing::TestWithParam<RunCase> {};

TEST_P(TemporalRun, HundredStepsEndWhereSingleStepsEnd) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  const RunCase rc = GetParam();
  // Passes of 2 (the most every radius fuses; the default may be single steps on this GPU).
  const Case ct = Case::parse(case_text(rc, "temporal", 2), "temporal.toml");
  const Case cs = Case::parse(case_text(rc, "shared"), "shared.toml");
  auto temporal = make_stencil_model(ct, strategy_from_case(ct));
  auto single = make_stencil_model(cs, strategy_from_case(cs));
  const double dt = ct.get_float("run.dt");
  const int fused = run_100(*temporal, dt);
  for (int i = 0; i < 100; ++i) single->step(dt);
  EXPECT_GT(fused, 0) << "no pass fused steps";
  // A step the cadences leave alone is a single step where that needs no halo fill after a pass:
  // always with fixed boundaries (filled once); periodic ones here need one (nx = 37: no ring
  // reads the x ends wrapped), so those steps are passes of one.
  bool saw_temporal_kernel = false;
  int passes_of_one = 0;
  for (const KernelRecord& r : temporal->take_records())
    if (r.kernel.find("_temporal_") != std::string::npos) saw_temporal_kernel = true, passes_of_one += r.steps == 1;
  EXPECT_TRUE(saw_temporal_kernel);
  if (rc.fixed) EXPECT_EQ(passes_of_one, 0) << "steps cut short by the cadences ran as passes of one";

  const ModelState a = temporal->save_state(), b = single->save_state();
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  const bool exact = rc.equation != "gray-scott";
  const double tol = rc.fp64 ? 1e-12 : 1e-5;
  for (std::size_t f = 0; f < a.arrays.size(); ++f) {
    const auto& x = a.arrays[f].second;
    const auto& y = b.arrays[f].second;
    ASSERT_EQ(x.size(), y.size());
    std::size_t differ = 0, first = 0;
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool same = exact ? x[i] == y[i] : std::fabs(x[i] - y[i]) <= tol * std::max(1.0, std::fabs(y[i]));
      if (!same && differ++ == 0) first = i;
      worst = std::max(worst, std::fabs(x[i] - y[i]));
    }
    EXPECT_EQ(differ, 0u) << a.arrays[f].first << ": " << differ << " points differ, first at " << first << " ("
                          << x[first] << " vs " << y[first] << "), largest difference " << worst;
  }
}

std::vector<RunCase> run_cases() {
  std::vector<RunCase> v;
  for (bool fp64 : {false, true})
    for (bool fixed : {false, true}) {
      for (const char* eq : {"heat", "wave"})
        for (int R = 1; R <= 4; ++R) v.push_back({eq, R, fp64, fixed});
      v.push_back({"gray-scott", 1, fp64, fixed});
    }
  return v;
}

std::string run_case_name(const ::testing::TestParamInfo<RunCase>& i) {
  std::string eq = i.param.equation == "gray-scott" ? "gray_scott" : i.param.equation;
  return eq + "_r" + std::to_string(i.param.radius) + (i.param.fp64 ? "_fp64" : "_fp32") +
         (i.param.fixed ? "_fixed" : "_periodic");
}

INSTANTIATE_TEST_SUITE_P(Equations, TemporalRun, ::testing::ValuesIn(run_cases()), run_case_name);

// A step cut short on a periodic grid that the single step's kernel reads wrapped at every end
// (the bulk-copy ring of heat fp32 at R = 2 on Hopper, a grid of whole vectors and tiles): the
// single-step kernel, with no halo fill, instead of a pass of one; the state as --tiling shared's.
TEST(TemporalRunCut, SingleStepsWhereTheyFillNothing) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  if (d.cc_major < 9) GTEST_SKIP() << "the bulk-copy ring needs a Hopper GPU";
  const std::string grid = "\n[grid]\nnx = 64\nny = 32\nnz = 24\nradius = 2\nboundary = \"periodic\"\n";
  const std::string head = "[run]\nmodel = \"stencil\"\ndt = 1.5e-5\n[strategy]\nbackend = \"cuda\"\ntiling = ";
  const Case ct = Case::parse(head + "\"temporal\"" + grid + "[stencil]\ntemporal_steps = 2\n", "temporal.toml");
  const Case cs = Case::parse(head + "\"shared\"" + grid, "shared.toml");
  auto temporal = make_stencil_model(ct, strategy_from_case(ct));
  auto single = make_stencil_model(cs, strategy_from_case(cs));
  const double dt = ct.get_float("run.dt");
  EXPECT_GT(run_100(*temporal, dt), 0) << "no pass fused steps";
  for (int i = 0; i < 100; ++i) single->step(dt);
  int passes = 0, single_steps = 0, fills = 0;
  for (const KernelRecord& r : temporal->take_records()) {
    if (r.kernel.find("_temporal_") != std::string::npos) {
      ++passes;
      EXPECT_EQ(r.steps, 2) << "a pass of " << r.steps << " step(s): " << r.kernel;
    } else if (r.kernel.find("_halo_") != std::string::npos) {
      ++fills;
    } else if (r.kernel.find("stencil_heat_") == 0) {
      ++single_steps;
    }
  }
  // 100 steps in horizons of diagnostics every 7 and snapshots every 10.
  EXPECT_GT(single_steps, 0);
  EXPECT_EQ(2 * passes + single_steps, 100);
  // The first single step fills, as --tiling shared's first step does: what a kernel reads
  // wrapped is known from its first launch.
  EXPECT_LE(fills, 1) << "single steps after passes filled halos";
  const ModelState a = temporal->save_state(), b = single->save_state();
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (std::size_t f = 0; f < a.arrays.size(); ++f) EXPECT_TRUE(a.arrays[f].second == b.arrays[f].second);
}

// stencil.temporal_steps = 0: passes where cuda::temporal_pays says fusing beats the single step
// on this GPU (heat R = 1 fp32 on an H100 and an H200), the single-step kernels where it does not
// (R = 4 on both; R = 2 with fixed boundaries on an H200), never where a periodic run would not;
// either way the steps end where --tiling shared's end, bit for bit.
TEST(TemporalRunDefault, FusesWhereThePassPays) {
#if !TIERSIM_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  for (const bool fixed : {false, true})
    for (int R : {1, 2, 3, 4}) {
      const RunCase rc{"heat", R, false, fixed};
      const Case ct = Case::parse(case_text(rc, "temporal"), "temporal.toml");
      const Case cs = Case::parse(case_text(rc, "shared"), "shared.toml");
      auto temporal = make_stencil_model(ct, strategy_from_case(ct));
      auto single = make_stencil_model(cs, strategy_from_case(cs));
      const double dt = ct.get_float("run.dt");
      const bool pays = cuda::temporal_pays(Equation::Heat, R, false, fixed ? Boundary::Fixed : Boundary::Periodic);
      if (R == 4) {
        EXPECT_FALSE(pays) << "fusing at R = 4 measured 0.15-0.23x on an H100";
      }
      if (fixed && pays) {
        EXPECT_TRUE(cuda::temporal_pays(Equation::Heat, R, false, Boundary::Periodic)) << "R = " << R;
      }
      for (int done = 0; done < 20;) done += int(temporal->advance(dt, 20 - done));
      for (int i = 0; i < 20; ++i) single->step(dt);
      bool saw_temporal_kernel = false;
      for (const KernelRecord& r : temporal->take_records())
        saw_temporal_kernel |= r.kernel.find("_temporal_") != std::string::npos;
      EXPECT_EQ(saw_temporal_kernel, pays) << "R = " << R << (fixed ? ", fixed" : ", periodic");
      const bool said = temporal->describe().find(pays ? "steps a temporal pass" : "single steps") != std::string::npos;
      EXPECT_TRUE(said) << temporal->describe();
      const ModelState a = temporal->save_state(), b = single->save_state();
      ASSERT_EQ(a.arrays.size(), b.arrays.size());
      for (std::size_t f = 0; f < a.arrays.size(); ++f)
        EXPECT_TRUE(a.arrays[f].second == b.arrays[f].second) << a.arrays[f].first << ", R = " << R;
    }
#endif
}

// An equation the temporal kernels are not built for, or a fused-step count they cannot take, is
// refused in one line when the model is made.
TEST(TemporalRunRefusals, UnbuiltRadiusAndTooManySteps) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  RunCase gs{"gray-scott", 2, false, false};
  const Case c1 = Case::parse(case_text(gs, "temporal"), "gs.toml");
  try {
    (void)make_stencil_model(c1, strategy_from_case(c1));
    ADD_FAILURE() << "gray-scott R = 2 with --tiling temporal was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no temporally blocked kernel"), std::string::npos) << e.what();
  }
  RunCase heat{"heat", 4, false, false};
  const Case c2 = Case::parse(case_text(heat, "temporal", 8), "heat.toml");
  try {
    (void)make_stencil_model(c2, strategy_from_case(c2));
    ADD_FAILURE() << "8 fused steps at R = 4 were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stencil.temporal_steps = 8"), std::string::npos) << e.what();
  }
}

}  // namespace
