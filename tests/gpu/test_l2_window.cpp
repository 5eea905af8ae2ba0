// L2 persistence (--l2-persist on): the window is on the launches that should carry it (read
// back from the engine's stream and from the telemetry records), it follows the stencil's
// ping-pong buffers, it changes no result, and after the engine is gone nothing persists: the
// stream's window is cleared, the persisting limit is back to its previous value, and a
// read kernel over half the L2 is not slower than before the run (15% tolerance, median of 15).
// A control experiment leaves persisting lines and the limit behind on purpose and prints how
// much that slows the same probe. Also: Tuning::kernel_timing = false records no times.
// Skipped, with the reason, where no GPU is usable or the device has no persisting L2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/l2_window.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/stencil_engine.hpp"
#include "gpu_test.hpp"

using namespace tiersim;

namespace {

#define SKIP_WITHOUT_L2_PERSISTENCE()                                                      \
  do {                                                                                     \
    SKIP_WITHOUT_GPU();                                                                    \
    const L2Support s_ = l2_persistence_support();                                         \
    if (!s_.supported) GTEST_SKIP() << "no L2 persistence on this device: " << s_.why_not; \
  } while (0)

StencilProblem cube(Equation eq, int n) {
  StencilProblem p;
  p.equation = eq;
  p.nx = p.ny = p.nz = n;
  p.radius = 1;
  const bool grid_units = with_equation(eq, [](auto e) { return decltype(e)::kGridUnits; });
  for (double& h : p.h) h = grid_units ? 1.0 : 1.0 / n;
  return p;
}

double stable_dt(const StencilProblem& p) { return 0.4 * stencil_dt_limit(p); }

// Records of `steps` periodic steps from the start: an update each, and the halo fill of the
// first (the update kernel reads the rows and planes beyond the ends itself after it, and its
// stores keep the rows' x halos).
void expect_updates_and_one_fill(const std::vector<KernelRecord>& recs, int steps) {
  int fills = 0, updates = 0;
  for (const KernelRecord& r : recs) (r.kernel.find("halo") != std::string::npos ? fills : updates) += 1;
  EXPECT_EQ(updates, steps);
  EXPECT_EQ(fills, 1);
}

Strategy cuda_strategy(L2Persist l2) {
  Strategy s;
  s.backend = Backend::Cuda;
  s.tiling = Tiling::Shared;
  s.coeffs = CoeffSpace::Global;
  s.l2_persist = l2;
  return s;
}

std::unique_ptr<StencilEngine> stencil_engine(const StencilProblem& p, L2Persist l2, const Tuning& tuning = {}) {
  Strategy s = cuda_strategy(l2);
  s.tuning = tuning;
  auto e = make_stencil_cuda(s, p);
  for (int f = 0; f < stencil_field_count(p.equation); ++f)
    e->upload(f, test::random_fp32_field(p.points(), 7 + unsigned(f), 0.25, 0.75));
  return e;
}

// The persisting limit and the stream's window are back where they were; the object that set
// them cleared the window on its stream before the stream went away.
void expect_released(std::size_t limit_before) {
  const L2ProbeState st = l2_probe();
  EXPECT_TRUE(st.live.empty()) << st.live.size() << " windows still live";
  ASSERT_TRUE(st.released_any);
  EXPECT_EQ(st.released_stream_bytes, 0u) << "the stream still carried a window after release";
  EXPECT_TRUE(st.released_reset) << "cudaCtxResetPersistingL2Cache failed";
  EXPECT_EQ(st.released_limit_before, limit_before);
  EXPECT_EQ(st.released_limit_after, limit_before);
  EXPECT_EQ(st.limit_now, limit_before);
}

Tuning placed(StencilL2Target t) {
  Tuning tuning;
  tuning.l2_target = t;
  return tuning;
}

TEST(L2Window, StencilPairWindowCoversBothFieldsAndIsReleased) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  const L2Support sup = l2_persistence_support();
  const std::size_t limit_before = l2_probe().limit_now;
  const Tuning tuning = placed(StencilL2Target::Pair);
  const StencilProblem p = cube(Equation::Heat, 96);
  {
    auto e = stencil_engine(p, L2Persist::On, tuning);
    const void* base = nullptr;
    std::size_t bytes = 0;
    for (int s = 0; s < 3; ++s) {
      e->step(stable_dt(p));
      const L2ProbeState st = l2_probe();
      ASSERT_EQ(st.live.size(), 1u);
      const L2StreamWindow& w = st.live[0];
      if (s == 0) base = w.base, bytes = w.bytes;
      EXPECT_EQ(w.base, base) << "the pair window does not move";
      EXPECT_EQ(w.bytes, bytes);
      EXPECT_TRUE(w.hit_persisting);
      EXPECT_TRUE(w.miss_streaming);
      EXPECT_GT(w.hit_ratio, 0.f);
      EXPECT_LE(w.hit_ratio, 1.f);
      EXPECT_LE(w.carveout, sup.persisting_max);
      // Persisting demand within the carve-out (2 fields, touched bytes).
      const double field = double(p.nx + 2) * (p.ny + 2) * (p.nz + 2) * sizeof(float);
      EXPECT_GE(double(w.bytes), 2 * field);
      EXPECT_LE(double(w.hit_ratio) * 2 * field, double(w.carveout) * 1.01);
    }
    for (const KernelRecord& r : e->take_records()) {
      EXPECT_TRUE(r.l2_window) << r.kernel;
      EXPECT_DOUBLE_EQ(r.l2_window_bytes, double(bytes)) << r.kernel;
    }
  }
  expect_released(limit_before);
}

TEST(L2Window, StencilOutputWindowFollowsTheOutputAndIsReleased) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  ASSERT_EQ(Tuning{}.l2_target, StencilL2Target::Auto) << "the default placement (heat: the output)";
  const L2Support sup = l2_persistence_support();
  const std::size_t limit_before = l2_probe().limit_now;
  const StencilProblem p = cube(Equation::Heat, 96);
  const double dt = stable_dt(p);
  {
    auto e = stencil_engine(p, L2Persist::On);
    std::vector<const void*> bases;
    for (int s = 0; s < 4; ++s) {
      e->step(dt);
      const L2ProbeState st = l2_probe();
      ASSERT_EQ(st.live.size(), 1u);
      const L2StreamWindow& w = st.live[0];
      EXPECT_GT(w.bytes, 0u);
      EXPECT_LE(w.bytes, sup.window_max);
      EXPECT_TRUE(w.hit_persisting);
      EXPECT_TRUE(w.miss_streaming);
      EXPECT_GT(w.hit_ratio, 0.f);
      EXPECT_LE(w.hit_ratio, 1.f);
      EXPECT_GT(w.carveout, 0u);
      EXPECT_LE(w.carveout, sup.persisting_max);
      EXPECT_EQ(st.limit_now, w.carveout);
      bases.push_back(w.base);
    }
    // Ping-pong: the window moves to the buffer each step writes, and back.
    EXPECT_NE(bases[0], bases[1]);
    EXPECT_EQ(bases[0], bases[2]);
    EXPECT_EQ(bases[1], bases[3]);
    const L2ProbeState st = l2_probe();
    const std::vector<KernelRecord> recs = e->take_records();
    expect_updates_and_one_fill(recs, 4);
    for (const KernelRecord& r : recs) {
      EXPECT_TRUE(r.l2_window) << r.kernel;
      EXPECT_DOUBLE_EQ(r.l2_window_bytes, double(st.live[0].bytes)) << r.kernel;
      EXPECT_FLOAT_EQ(float(r.l2_hit_ratio), st.live[0].hit_ratio) << r.kernel;
      EXPECT_GT(r.ms, 0) << r.kernel;
    }
  }
  expect_released(limit_before);
}

// The wave's default (Auto): one window over group A that never moves, with slack in the
// carve-out (hot set / kDefaultL2Fill, rounded up by the driver).
TEST(L2Window, WaveWindowStaysOnOneBufferWithSlack) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  ASSERT_EQ(Tuning{}.l2_target, StencilL2Target::Auto);
  const L2Support sup = l2_persistence_support();
  const std::size_t limit_before = l2_probe().limit_now;
  const StencilProblem p = cube(Equation::Wave, 96);
  const double field = double(p.nx + 2) * (p.ny + 2) * (p.nz + 2) * sizeof(float);
  {
    auto e = stencil_engine(p, L2Persist::On);
    const void* base = nullptr;
    for (int s = 0; s < 4; ++s) {
      e->step(stable_dt(p));
      const L2ProbeState st = l2_probe();
      ASSERT_EQ(st.live.size(), 1u);
      const L2StreamWindow& w = st.live[0];
      if (s == 0) base = w.base;
      EXPECT_EQ(w.base, base) << "step " << s << ": the wave's window does not move";
      EXPECT_GE(double(w.bytes), field);
      EXPECT_FLOAT_EQ(w.hit_ratio, 1.f);
      EXPECT_GE(double(w.carveout), std::min(field / kDefaultL2Fill, double(sup.persisting_max)))
          << "the carve-out leaves room beyond the hot set";
      EXPECT_EQ(st.limit_now, w.carveout);
    }
  }
  expect_released(limit_before);
}

TEST(L2Window, ResultsAreTheSameWithTheWindowOnOrOff) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  for (StencilL2Target t : {StencilL2Target::Pair, StencilL2Target::Output, StencilL2Target::Fixed})
    for (Equation eq : {Equation::Heat, Equation::Wave, Equation::GrayScott}) {
      const Tuning tuning = placed(t);
      const StencilProblem p = cube(eq, 72);
      const double dt = stable_dt(p);
      auto off = stencil_engine(p, L2Persist::Off, tuning);
      auto on = stencil_engine(p, L2Persist::On, tuning);
      for (int s = 0; s < 5; ++s) off->step(dt), on->step(dt);
      for (int f = 0; f < stencil_field_count(eq); ++f) {
        const std::vector<double> a = off->download(f), b = on->download(f);
        ASSERT_EQ(a.size(), b.size());
        std::size_t diff = 0;
        for (std::size_t i = 0; i < a.size(); ++i) diff += !(a[i] == b[i]);
        EXPECT_EQ(diff, 0u) << name(eq) << " field " << f << ": a cache policy must not change a result";
      }
    }
}

TEST(L2Window, GrayScottWindowCoversBothOutputs) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  const Tuning tuning = placed(StencilL2Target::Output);
  const std::size_t limit_before = l2_probe().limit_now;
  const StencilProblem p = cube(Equation::GrayScott, 64);
  {
    auto e = stencil_engine(p, L2Persist::On, tuning);
    e->step(stable_dt(p));
    const L2ProbeState st = l2_probe();
    ASSERT_EQ(st.live.size(), 1u);
    const double one_grid = double(p.nx + 2) * (p.ny + 2) * (p.nz + 2) * sizeof(float);
    EXPECT_GE(double(st.live[0].bytes), 2 * one_grid) << "U and V written by the step are both in the window";
    for (const KernelRecord& r : e->take_records()) EXPECT_TRUE(r.l2_window) << r.kernel;
  }
  expect_released(limit_before);
}

TEST(L2Window, NbodyPositionsInTheWindow) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  const std::size_t limit_before = l2_probe().limit_now;
  const int n = 65536;
  Bodies b;
  b.resize(n);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < n; ++i) {
    b.pos[std::size_t(i)] = {u(rng), u(rng), u(rng)};
    b.vel[std::size_t(i)] = {0.01 * u(rng), 0.01 * u(rng), 0.01 * u(rng)};
    b.acc[std::size_t(i)] = {0, 0, 0};
    b.mass[std::size_t(i)] = 1.0 / n;
  }
  for (Tiling t : {Tiling::None, Tiling::Shared}) {
    Strategy s = cuda_strategy(L2Persist::On);
    s.layout = Layout::SoA;
    s.tiling = t;
    {
      auto e = make_nbody_cuda(s, n, NbodyParams{});
      e->upload(b);
      e->compute_forces();
      e->kick(1e-3);
      e->drift(1e-3);
      const L2ProbeState st = l2_probe();
      ASSERT_EQ(st.live.size(), 1u);
      // soa: x, y, z, m are the first four 256-byte-aligned arrays of the store.
      EXPECT_EQ(st.live[0].bytes, 4u * n * sizeof(float));
      const std::vector<KernelRecord> recs = e->take_records();
      ASSERT_EQ(recs.size(), 3u);
      for (const KernelRecord& r : recs) {
        EXPECT_TRUE(r.l2_window) << r.kernel;
        EXPECT_DOUBLE_EQ(r.l2_window_bytes, 4.0 * n * sizeof(float)) << r.kernel;
        EXPECT_FLOAT_EQ(float(r.l2_hit_ratio), st.live[0].hit_ratio) << r.kernel;
      }
    }
    expect_released(limit_before);
  }
}

TEST(L2Window, OffSetsNothing) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  const std::size_t limit_before = l2_probe().limit_now;
  const StencilProblem p = cube(Equation::Heat, 48);
  auto e = stencil_engine(p, L2Persist::Off);
  e->step(stable_dt(p));
  const L2ProbeState st = l2_probe();
  EXPECT_TRUE(st.live.empty());
  EXPECT_EQ(st.limit_now, limit_before);
  for (const KernelRecord& r : e->take_records()) {
    EXPECT_FALSE(r.l2_window) << r.kernel;
    EXPECT_EQ(r.l2_window_bytes, 0) << r.kernel;
  }
}

TEST(L2Window, KernelTimingSwitch) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  const StencilProblem p = cube(Equation::Heat, 48);
  Tuning untimed;
  untimed.kernel_timing = false;
  auto off = stencil_engine(p, L2Persist::Off, untimed);
  auto e = stencil_engine(p, L2Persist::Off);
  const double dt = stable_dt(p);
  for (int s = 0; s < 3; ++s) off->step(dt);
  std::vector<KernelRecord> recs = off->take_records();
  expect_updates_and_one_fill(recs, 3);
  for (const KernelRecord& r : recs) EXPECT_EQ(r.ms, 0.0) << r.kernel << ": timing off records no time";
  for (int s = 0; s < 3; ++s) e->step(dt);
  recs = e->take_records();
  expect_updates_and_one_fill(recs, 3);
  for (const KernelRecord& r : recs) {
    EXPECT_GT(r.ms, 0.0) << r.kernel;
    EXPECT_GT(r.bytes_compulsory, 0.0) << r.kernel << ": the cost model stays with timing on or off";
  }
}

// run.telemetry_every: only launches stamped with a multiple of the interval get events.
TEST(L2Window, KernelTimingEveryNthStep) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  const StencilProblem p = cube(Equation::Heat, 48);
  Tuning every3;
  every3.timing_every = 3;
  auto e = stencil_engine(p, L2Persist::Off, every3);
  const double dt = stable_dt(p);
  for (int s = 1; s <= 6; ++s) {
    set_telemetry_step(s);
    e->step(dt);
  }
  const std::vector<KernelRecord> recs = e->take_records();
  expect_updates_and_one_fill(recs, 6);
  for (const KernelRecord& r : recs) {
    if (r.step % 3 == 0)
      EXPECT_GT(r.ms, 0.0) << r.kernel << " at step " << r.step;
    else
      EXPECT_EQ(r.ms, 0.0) << r.kernel << " at step " << r.step << ": not a timed step";
  }
}

TEST(L2Window, NothingPersistsAfterTheRun) {
  SKIP_WITHOUT_L2_PERSISTENCE();
  const L2Support sup = l2_persistence_support();
  const std::size_t limit_before = l2_probe().limit_now;
  const std::size_t probe_bytes = sup.l2_bytes / 2;
  const double tol = 1.15;
  const double before = l2_read_probe_ms(probe_bytes, 15);
  {
    // A field about the size of the carve-out: the window fills the set-aside L2.
    const StencilProblem p = cube(Equation::Heat, 192);
    auto e = stencil_engine(p, L2Persist::On);
    for (int s = 0; s < 20; ++s) e->step(stable_dt(p));
    const std::vector<KernelRecord> recs = e->take_records();
    ASSERT_FALSE(recs.empty());
    EXPECT_TRUE(recs.back().l2_window);
  }
  expect_released(limit_before);
  const double after = l2_read_probe_ms(probe_bytes, 15);
  // Control: persisting lines and the limit deliberately left behind.
  const std::size_t prev = l2_leave_persisting_lines(sup.persisting_max, sup.persisting_max);
  const double control = l2_read_probe_ms(probe_bytes, 15);
  l2_cleanup_after_control(prev);
  const double cleaned = l2_read_probe_ms(probe_bytes, 15);
  std::printf(
      "[ l2 probe ] read %.1f MB x 20 passes: before %.4f ms, after the run %.4f ms (%.3fx), "
      "with persisting lines left behind %.4f ms (%.3fx), after cleaning them %.4f ms\n",
      double(probe_bytes) / 1e6, before, after, after / before, control, control / before, cleaned);
  RecordProperty("probe_before_ms", std::to_string(before));
  RecordProperty("probe_after_ms", std::to_string(after));
  RecordProperty("probe_control_ms", std::to_string(control));
  EXPECT_LE(after, before * tol) << "a kernel after the run is slower than before it: leftover persisting lines?";
  EXPECT_LE(cleaned, before * tol);
  EXPECT_EQ(l2_probe().limit_now, limit_before);
}

}  // namespace
