// CUDA N-body backend against a float64 CPU reference computed here with the same physics
// functions (kernels/physics/gravity.hpp). Every test skips with the reason when no GPU is
// usable. Inputs are fresh random bodies (seed printed on failure); outputs are poisoned with
// NaN before each kernel and checked to be fully written.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/compensated_sum.hpp"
#include "kernels/device_info.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"
#include "layouts/particles.hpp"
#include "sim/bench.hpp"
#include "gpu_test.hpp"

namespace tiersim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

unsigned fresh_seed() { return std::random_device{}(); }

// Random bodies in [-1, 1]^3, masses in [0.5, 1.5]/n, small random velocities; every value
// rounded to the engine's scalar type so that the reference sees exactly the GPU's inputs.
// v rounded to fp32 when the engine stores fp32 (the reference must see the GPU's inputs).
double in_precision(double v, Precision p) {
  if (p == Precision::Fp64) return v;
  volatile float f = static_cast<float>(v);  // volatile: keep the rounding (see below)
  return static_cast<double>(f);
}

// Random bodies in [-1, 1]^3, masses in [0.5, 1.5]/n, small random velocities; every value
// rounded to the engine's scalar type so that the reference sees exactly the GPU's inputs.
// (GCC 12 -O3 dropped the fp32 rounding of an earlier lambda form of this function in this
// file; NbodyGpuTestInputs below guards it.)
Bodies random_bodies(int n, Precision p, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), um(0.5, 1.5);
  Bodies b;
  b.resize(std::size_t(n));
  for (std::size_t i = 0; i < std::size_t(n); ++i) {
    const double x = u(rng), y = u(rng), z = u(rng);
    b.pos[i] = {in_precision(x, p), in_precision(y, p), in_precision(z, p)};
    const double vx = u(rng), vy = u(rng), vz = u(rng);
    b.vel[i] = {in_precision(0.1 * vx, p), in_precision(0.1 * vy, p), in_precision(0.1 * vz, p)};
    b.acc[i] = {kNaN, kNaN, kNaN};  // poison: the force kernel must write every body
    b.mass[i] = in_precision(um(rng) / n, p);
  }
  return b;
}

// The inputs the reference sees must be exactly what the GPU stores (no GPU needed).
TEST(NbodyGpuTestInputs, RandomBodiesAreExactInFp32) {
  const Bodies b = random_bodies(1000, Precision::Fp32, fresh_seed());
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b.pos[i].x, double(float(b.pos[i].x)));
    ASSERT_EQ(b.vel[i].y, double(float(b.vel[i].y)));
    ASSERT_EQ(b.mass[i], double(float(b.mass[i])));
  }
}

// a_i in double with gravity.hpp's accumulate_pair, for the rows in `rows`.
std::vector<Vec3<double>> reference_acc(const Bodies& b, const std::vector<int>& rows, double eps2, double G) {
  std::vector<Vec3<double>> out(rows.size());
  const int n = int(b.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (int r = 0; r < int(rows.size()); ++r) {
    const int i = rows[std::size_t(r)];
    Vec3<double> a{0, 0, 0};
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      accumulate_pair(b.pos[std::size_t(i)],
                      Vec4<double>{b.pos[std::size_t(j)].x, b.pos[std::size_t(j)].y, b.pos[std::size_t(j)].z,
                                   b.mass[std::size_t(j)]},
                      eps2, a);
    }
    out[std::size_t(r)] = {G * a.x, G * a.y, G * a.z};
  }
  return out;
}

double rel_error(const std::vector<Vec3<double>>& got, const std::vector<Vec3<double>>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const Vec3<double> d = got[i] - ref[i];
    num += dot(d, d);
    den += dot(ref[i], ref[i]);
  }
  return std::sqrt(num / den);
}

bool all_finite(const Vec3<double>& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// W = -G sum_{i<j} m_i m_j / sqrt(r_ij^2 + eps2) in double with gravity.hpp's pair_potential
// (the self term left out, as the engines do), compensated (a plain running sum of the n^2/2 terms
// is itself off by ~1.1e-16 sqrt(terms), 1e-13 at n = 1000, as much as the fp64 tolerance); the
// same whatever the thread count.
double reference_potential(const Bodies& b, double eps2, double G) {
  const int n = int(b.size());
  std::vector<double> row(b.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < n; ++i) {
    CompensatedSum phi;
    const auto si = std::size_t(i);
    for (int j = i + 1; j < n; ++j) {
      const auto sj = std::size_t(j);
      phi.add(pair_potential(b.pos[si], Vec4<double>{b.pos[sj].x, b.pos[sj].y, b.pos[sj].z, b.mass[sj]}, eps2));
    }
    row[si] = b.mass[si] * phi.value();
  }
  CompensatedSum w;
  for (double r : row) w.add(r);
  return G * w.value();
}

// Tolerances of the potential energy, relative to |W|. fp64: each pair term is within a few units
// of 1.1e-16 (rsqrt_hd's Newton step is rounding-limited), and each body's sum rounds once per term
// in its tile (at most 511 times, tiles of at most 512 bodies) and once per tile in double, each
// time by at most 1.1e-16 of the partial sum and with random sign: ~(sqrt(512) + sqrt(tiles)) u
// per body, 1e-14 at most here, which W's sum over n bodies averages further; 1e-13. fp32: rsqrtf
// is within 2 ulp (2.4e-7) of 1/sqrt, each term is rounded a few more times at 6e-8, and a tile's
// fp32 sum of up to 512 terms is off by ~sqrt(512) x 6e-8 = 1.4e-6 typically (3e-5 at worst), in
// errors of random sign that the sums over tiles and bodies average; 1e-6, the bound asked of fp32
// runs (the CPU backend's fp32 sums of 256 terms measure 1e-9 at n = 1000, its fp64 ones 0).
double potential_tolerance(Precision p) { return p == Precision::Fp32 ? 1e-6 : 1e-13; }

// The potential beside the forces, for one strategy, n and tuning: the accelerations of
// compute_forces(true) equal those of compute_forces(false) bit for bit, W matches the float64
// reference, and diagnostics() with no fused pass since the upload sums the same W (within the same bound)
// with a potential-only pass that leaves the accelerations alone.
void check_potential(const Strategy& s, int n, const NbodyTuning& tuning, double softening) {
  const unsigned seed = fresh_seed();
  SCOPED_TRACE("potential: seed " + std::to_string(seed) + ", n " + std::to_string(n) + ", block " +
               std::to_string(tuning.block) + ", bodies/thread " + std::to_string(tuning.bodies_per_thread) +
               ", softening " + std::to_string(softening));
  NbodyParams p;
  p.G = 1.3;
  p.softening = softening;
  const Bodies b = random_bodies(n, s.precision, seed);  // accelerations NaN
  auto eng = make_nbody_cuda(s, n, p, tuning);
  eng->upload(b);
  eng->compute_forces(false);
  const Bodies plain = eng->download();
  eng->upload(b);
  (void)eng->take_records();
  eng->compute_forces(true);
  const NbodyDiagnostics fused = eng->diagnostics();
  const Bodies with_potential = eng->download();
  auto recs = eng->take_records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kernel,
            std::string("nbody_forces_potential_") + (s.tiling == Tiling::Shared ? "shared" : "global"));
  EXPECT_DOUBLE_EQ(recs[0].work, double(n) * n);
  EXPECT_EQ(recs[1].kernel, "nbody_diagnostics");  // no potential-only pass: the fused one is current
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    const auto si = std::size_t(i);
    ASSERT_TRUE(all_finite(with_potential.acc[si])) << "body " << i;
    differ += with_potential.acc[si].x != plain.acc[si].x || with_potential.acc[si].y != plain.acc[si].y ||
              with_potential.acc[si].z != plain.acc[si].z;
  }
  EXPECT_EQ(differ, 0) << "bodies whose acceleration differs with the potential";

  const double ref = reference_potential(b, p.softening * p.softening, p.G);
  if (n == 1) {
    EXPECT_EQ(fused.potential, 0.0);  // the self term is left out
  } else {
    const double err = std::fabs(fused.potential - ref) / std::fabs(ref);
    EXPECT_LT(err, potential_tolerance(s.precision))
        << eng->strategy_name() << ": potential " << fused.potential << ", reference " << ref;
    std::printf("[ info ] %s n=%d K=%d block=%d: relative error of the potential %.3g (tolerance %.0e)\n",
                eng->strategy_name().c_str(), n, tuning.bodies_per_thread, tuning.block, err,
                potential_tolerance(s.precision));
  }

  eng->upload(b);
  (void)eng->take_records();
  const NbodyDiagnostics alone = eng->diagnostics();
  recs = eng->take_records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kernel, "nbody_potential");
  EXPECT_EQ(recs[1].kernel, "nbody_diagnostics");
  // The two kernels sum the same pairs in the same order, but nvcc contracts the multiply-adds of
  // each kernel on its own (measured on an H200: equal to 6 digits, not always bit for bit, fp32
  // and fp64), so the potential-only pass is held to the fused pass's bound against the reference.
  if (n > 1) {
    const double eps = s.precision == Precision::Fp32 ? 0x1p-23 : 0x1p-52;
    const double apart = std::fabs(alone.potential - fused.potential) / std::fabs(fused.potential);
    EXPECT_LT(std::fabs(alone.potential - ref) / std::fabs(ref), potential_tolerance(s.precision))
        << "the potential-only pass: " << alone.potential << ", reference " << ref;
    EXPECT_LT(apart, potential_tolerance(s.precision))
        << "the potential-only pass sums other pairs: " << alone.potential << " vs " << fused.potential;
    std::printf("[ info ] %s n=%d: potential-only and fused passes %.3g apart (%.1f ulp)\n",
                eng->strategy_name().c_str(), n, apart, apart / eps);
  } else {
    EXPECT_EQ(alone.potential, 0.0);
  }
  const Bodies after = eng->download();
  int written = 0;
  for (const auto& a : after.acc) written += !(std::isnan(a.x) && std::isnan(a.y) && std::isnan(a.z));
  EXPECT_EQ(written, 0) << "accelerations written by the potential-only pass";
}

Strategy strategy(Layout l, Precision p, Tiling t) {
  Strategy s;
  s.backend = Backend::Cuda;
  s.layout = l;
  s.precision = p;
  s.tiling = t;
  return s;
}

// Every layout of the --layout table.
std::vector<Layout> all_layouts() {
  std::vector<Layout> v;
  for (const auto& l : Flag<Layout>::values) v.push_back(l.value);
  return v;
}
const std::vector<Layout> kLayouts = all_layouts();

// ---- forces: every tiling x layout x precision x N ----------------------------------------
using ForceParam = std::tuple<Tiling, Layout, Precision, int>;
const auto kForceParams =
    ::testing::Combine(::testing::Values(Tiling::None, Tiling::Shared), ::testing::ValuesIn(kLayouts),
                       ::testing::Values(Precision::Fp32, Precision::Fp64), ::testing::Values(1, 31, 1000, 65537));
std::string force_param_name(const ::testing::TestParamInfo<ForceParam>& info) {
  std::ostringstream s;
  s << name(std::get<0>(info.param)) << "_" << name(std::get<1>(info.param)) << "_" << name(std::get<2>(info.param))
    << "_n" << std::get<3>(info.param);
  return s.str();
}
class NbodyForcesGpu : public ::testing::TestWithParam<ForceParam> {};

void check_forces(const Strategy& s, int n, const NbodyTuning& tuning, double softening) {
  const unsigned seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", n " + std::to_string(n) + ", block " + std::to_string(tuning.block) +
               ", bodies/thread " + std::to_string(tuning.bodies_per_thread) + ", softening " +
               std::to_string(softening));
  NbodyParams p;
  p.G = 1.3;
  p.softening = softening;
  const Bodies b = random_bodies(n, s.precision, seed);
  auto eng = make_nbody_cuda(s, n, p, tuning);
  eng->upload(b);
  eng->compute_forces();
  const auto recs = eng->take_records();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_GT(recs[0].ms, 0.0);
  EXPECT_DOUBLE_EQ(recs[0].work, double(n) * n);
  const Bodies out = eng->download();
  // Fully written: no NaN left from the poison, anywhere.
  int unwritten = 0;
  for (int i = 0; i < n; ++i) unwritten += all_finite(out.acc[std::size_t(i)]) ? 0 : 1;
  ASSERT_EQ(unwritten, 0) << "bodies whose acceleration was not written";
  // Positions and masses untouched.
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out.pos[std::size_t(i)].x, b.pos[std::size_t(i)].x);
    ASSERT_EQ(out.mass[std::size_t(i)], b.mass[std::size_t(i)]);
  }
  // Rows checked against the reference: all for n <= 4096, otherwise a random sample that
  // includes the first and last bodies and the ends of every 256-body block boundary region.
  std::vector<int> rows;
  if (n <= 4096) {
    for (int i = 0; i < n; ++i) rows.push_back(i);
  } else {
    std::mt19937 rng(seed ^ 0x9e3779b9u);
    std::uniform_int_distribution<int> ui(0, n - 1);
    for (int k = 0; k < 3000; ++k) rows.push_back(ui(rng));
    for (int i : {0, 1, 255, 256, 1023, 1024, n - 2, n - 1}) rows.push_back(i);
  }
  const auto ref = reference_acc(b, rows, p.softening * p.softening, p.G);
  std::vector<Vec3<double>> got;
  for (int i : rows) got.push_back(out.acc[std::size_t(i)]);
  if (n == 1) {
    // A lone body feels no force: exactly zero.
    EXPECT_EQ(got[0].x, 0.0);
    EXPECT_EQ(got[0].y, 0.0);
    EXPECT_EQ(got[0].z, 0.0);
    return;
  }
  const double tol = s.precision == Precision::Fp32 ? 1e-5 : 1e-12;
  const double err = rel_error(got, ref);
  EXPECT_LT(err, tol) << eng->strategy_name() << ": relative force error " << err;
  std::printf("[ info ] %s n=%d: relative force error %.3g (tolerance %.0e)\n", eng->strategy_name().c_str(), n, err,
              tol);
}

TEST_P(NbodyForcesGpu, MatchesFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const auto [tiling, layout, precision, n] = GetParam();
  check_forces(strategy(layout, precision, tiling), n, NbodyTuning{}, 0.05);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, NbodyForcesGpu, kForceParams, force_param_name);

// ---- the potential beside the forces: every tiling x layout x precision x N ------------------
// (N = 1000 and 65537 run as 16 and 513 groups of bodies, even and odd, tile_share's two cases.)
class NbodyPotentialGpu : public ::testing::TestWithParam<ForceParam> {};

TEST_P(NbodyPotentialGpu, MatchesFloat64ReferenceAndLeavesTheForcesAlone) {
  SKIP_WITHOUT_GPU();
  const auto [tiling, layout, precision, n] = GetParam();
  check_potential(strategy(layout, precision, tiling), n, NbodyTuning{}, 0.05);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, NbodyPotentialGpu, kForceParams, force_param_name);

// Every compiled bodies-per-thread and a spread of block sizes, at sizes that are not
// multiples of anything. For the potential, 1531 bodies in groups of block x K make 1 to 48
// groups: one group (pairs inside it only), two (the tie d = g/2), odd and even counts.
TEST(NbodyForcesGpuTuning, EveryBodiesPerThreadAndBlock) {
  SKIP_WITHOUT_GPU();
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Tiling t : {Tiling::None, Tiling::Shared})
      for (int k : {1, 2, 4, 8})
        for (int block : {32, 96, 256}) {
          check_forces(strategy(Layout::SoA, p, t), 1531, NbodyTuning{block, k}, 0.05);
          check_potential(strategy(Layout::SoA, p, t), 1531, NbodyTuning{block, k}, 0.05);
        }
}

TEST(NbodyForcesGpuTuning, RejectsBadTuning) {
  SKIP_WITHOUT_GPU();
  EXPECT_THROW(make_nbody_cuda(strategy(Layout::SoA, Precision::Fp32, Tiling::Shared), 100, {}, NbodyTuning{100, 0}),
               Error);
  EXPECT_THROW(make_nbody_cuda(strategy(Layout::SoA, Precision::Fp32, Tiling::Shared), 100, {}, NbodyTuning{0, 3}),
               Error);
}

// Softening 0: the self term must vanish, not turn into 0 * inf (the kernels' eps^2 is then
// 1e-20, force_eps2; the reference's is 0: far below the tolerances at separations ~1).
TEST(NbodyForcesGpu0, ZeroSofteningStaysFinite) {
  SKIP_WITHOUT_GPU();
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Tiling t : {Tiling::None, Tiling::Shared}) {
      check_forces(strategy(Layout::Float4, p, t), 1000, NbodyTuning{}, 0.0);
      check_potential(strategy(Layout::Float4, p, t), 1000, NbodyTuning{}, 0.0);
    }
}

// ---- kick and drift against the same arithmetic on the CPU --------------------------------
using StepParam = std::tuple<Layout, Precision>;
class NbodyStepsGpu : public ::testing::TestWithParam<StepParam> {};

TEST_P(NbodyStepsGpu, KickAndDriftMatchCpu) {
  SKIP_WITHOUT_GPU();
  const auto [layout, precision] = GetParam();
  const int n = 100003;
  const unsigned seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Bodies b = random_bodies(n, precision, seed);
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& a : b.acc) {
    a = {u(rng), u(rng), u(rng)};
    a = {in_precision(a.x, precision), in_precision(a.y, precision), in_precision(a.z, precision)};
  }
  auto eng = make_nbody_cuda(strategy(layout, precision, Tiling::Shared), n, {}, {});
  eng->upload(b);
  const double dt = 0.0123;
  eng->kick(dt);
  eng->drift(dt);
  const auto recs = eng->take_records();
  ASSERT_EQ(recs.size(), 2u);
  const Bodies out = eng->download();
  const double tol = precision == Precision::Fp32 ? 2e-7 : 1e-15;
  double max_v = 0, max_x = 0;
  for (int i = 0; i < n; ++i) {
    const auto si = std::size_t(i);
    Vec3<double> v, x;
    if (precision == Precision::Fp32) {
      const auto vf = kick(Vec3<float>{float(b.vel[si].x), float(b.vel[si].y), float(b.vel[si].z)},
                           Vec3<float>{float(b.acc[si].x), float(b.acc[si].y), float(b.acc[si].z)}, float(dt));
      const auto xf = drift(Vec3<float>{float(b.pos[si].x), float(b.pos[si].y), float(b.pos[si].z)}, vf, float(dt));
      v = {vf.x, vf.y, vf.z};
      x = {xf.x, xf.y, xf.z};
    } else {
      v = kick(b.vel[si], b.acc[si], dt);
      x = drift(b.pos[si], v, dt);
    }
    ASSERT_TRUE(all_finite(out.vel[si]) && all_finite(out.pos[si]));
    const Vec3<double> dv = out.vel[si] - v, dx = out.pos[si] - x;
    max_v = std::max(max_v, std::sqrt(dot(dv, dv)));
    max_x = std::max(max_x, std::sqrt(dot(dx, dx)));
  }
  EXPECT_LT(max_v, tol);
  EXPECT_LT(max_x, tol);
}

// The non-finite check on the device (the diagnostics reduction): the first owned body whose
// velocity, position or acceleration is not finite, in every layout and precision, against the
// CPU engine on the same bodies; none on clean bodies; a partition's range only.
TEST_P(NbodyStepsGpu, DiagnosticsFindTheFirstNonFiniteBodyAsTheCpuDoes) {
  SKIP_WITHOUT_GPU();
  const auto [layout, precision] = GetParam();
  const int n = 100003;
  const unsigned seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Bodies b = random_bodies(n, precision, seed);
  for (auto& a : b.acc) a = {0.5, -0.25, 1.0};
  Strategy cs = strategy(layout, precision, Tiling::Shared);
  cs.backend = Backend::Cpu;
  auto eng = make_nbody_cuda(strategy(layout, precision, Tiling::Shared), n, {}, {});
  eng->upload(b);
  NbodyDiagnostics d = eng->diagnostics(false);
  EXPECT_EQ(d.first_non_finite_velocity, -1);
  EXPECT_EQ(d.first_non_finite_position, -1);
  EXPECT_EQ(d.first_non_finite_acceleration, -1);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> body(0, n - 1);
  const double inf = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) b.vel[std::size_t(body(rng))].y = kNaN, b.pos[std::size_t(body(rng))].z = -inf;
  b.acc[std::size_t(n - 1)].x = inf, b.acc[std::size_t(body(rng))].z = kNaN;
  eng->upload(b);
  auto cpu = make_nbody_cpu(cs, n, {});
  cpu->upload(b);
  d = eng->diagnostics(false);
  const NbodyDiagnostics c = cpu->diagnostics(false);
  EXPECT_GE(d.first_non_finite_velocity, 0);
  EXPECT_EQ(d.first_non_finite_velocity, c.first_non_finite_velocity);
  EXPECT_EQ(d.first_non_finite_position, c.first_non_finite_position);
  EXPECT_EQ(d.first_non_finite_acceleration, c.first_non_finite_acceleration);
  const BodyPartition part = BodyPartition::even(n, 3, 2);
  auto r = make_nbody_cuda(strategy(layout, precision, Tiling::Shared), n, {}, {}, part);
  auto rc = make_nbody_cpu(cs, n, {}, part);
  r->upload(b);
  rc->upload(b);
  d = r->diagnostics(false);
  const NbodyDiagnostics rcd = rc->diagnostics(false);
  EXPECT_EQ(d.first_non_finite_velocity, rcd.first_non_finite_velocity);
  EXPECT_EQ(d.first_non_finite_position, rcd.first_non_finite_position);
  EXPECT_EQ(d.first_non_finite_acceleration, rcd.first_non_finite_acceleration);
  EXPECT_GE(d.first_non_finite_acceleration, part.lo());
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, NbodyStepsGpu,
                         ::testing::Combine(::testing::ValuesIn(kLayouts),
                                            ::testing::Values(Precision::Fp32, Precision::Fp64)),
                         [](const ::testing::TestParamInfo<StepParam>& info) {
                           return std::string(name(std::get<0>(info.param))) + "_" + name(std::get<1>(info.param));
                         });

// ---- trajectory: 100 kick-drift-kick steps on the GPU vs a float64 CPU loop ---------------
struct CpuReference {
  Bodies b;
  double eps2, G;
  void forces() {
    std::vector<int> rows(b.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = int(i);
    const auto a = reference_acc(b, rows, eps2, G);
    for (std::size_t i = 0; i < a.size(); ++i) b.acc[i] = a[i];
  }
  void kick(double dt) {
    for (std::size_t i = 0; i < b.size(); ++i) b.vel[i] = tiersim::kick(b.vel[i], b.acc[i], dt);
  }
  void drift(double dt) {
    for (std::size_t i = 0; i < b.size(); ++i) b.pos[i] = tiersim::drift(b.pos[i], b.vel[i], dt);
  }
};

class NbodyTrajectoryGpu : public ::testing::TestWithParam<StepParam> {};

TEST_P(NbodyTrajectoryGpu, HundredStepsMatchFloat64Cpu) {
  SKIP_WITHOUT_GPU();
  const auto [layout, precision] = GetParam();
  const int n = 1000, steps = 100;
  const double dt = 1e-3;
  const unsigned seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  NbodyParams p;
  p.softening = 0.05;
  Bodies b = random_bodies(n, precision, seed);
  for (auto& a : b.acc) a = {0, 0, 0};
  CpuReference cpu{b, p.softening * p.softening, p.G};
  auto eng = make_nbody_cuda(strategy(layout, precision, Tiling::Shared), n, p, {});
  eng->upload(b);
  const NbodyDiagnostics d0 = eng->diagnostics();
  eng->compute_forces();
  cpu.forces();
  for (int s = 0; s < steps; ++s) {
    eng->kick(0.5 * dt);
    eng->drift(dt);
    eng->compute_forces();
    eng->kick(0.5 * dt);
    cpu.kick(0.5 * dt);
    cpu.drift(dt);
    cpu.forces();
    cpu.kick(0.5 * dt);
  }
  // The first diagnostics() summed the potential in a pass of its own, then reduced: 2 records.
  EXPECT_EQ(eng->take_records().size(), std::size_t(2 + 1 + 4 * steps));
  const Bodies out = eng->download();
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    const auto si = std::size_t(i);
    ASSERT_TRUE(all_finite(out.pos[si]));
    const Vec3<double> d = out.pos[si] - cpu.b.pos[si];
    num += dot(d, d);
    den += dot(cpu.b.pos[si], cpu.b.pos[si]);
  }
  // Stated tolerance: rms position difference / rms position after 100 steps.
  const double tol = precision == Precision::Fp32 ? 1e-5 : 1e-12;
  const double err = std::sqrt(num / den);
  EXPECT_LT(err, tol);
  std::printf("[ info ] trajectory %s: rms position difference %.3g after %d steps (tolerance %.0e)\n",
              eng->strategy_name().c_str(), err, steps, tol);
  // Diagnostics reduced on the GPU against the CPU sums (initial state); the potential in the
  // kernels' precision (potential_tolerance), the O(N) sums in double.
  double ke = 0, m = 0;
  for (int i = 0; i < n; ++i) {
    const auto si = std::size_t(i);
    ke += 0.5 * b.mass[si] * dot(b.vel[si], b.vel[si]);
    m += b.mass[si];
  }
  const double pe = reference_potential(b, cpu.eps2, p.G);
  EXPECT_NEAR(d0.kinetic, ke, 1e-12 * std::abs(ke));
  EXPECT_NEAR(d0.potential, pe, potential_tolerance(precision) * std::abs(pe));
  EXPECT_NEAR(d0.mass, m, 1e-12 * m);
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, NbodyTrajectoryGpu,
                         ::testing::Combine(::testing::ValuesIn(kLayouts),
                                            ::testing::Values(Precision::Fp32, Precision::Fp64)),
                         [](const ::testing::TestParamInfo<StepParam>& info) {
                           return std::string(name(std::get<0>(info.param))) + "_" + name(std::get<1>(info.param));
                         });

// ---- errors --------------------------------------------------------------------------------
TEST(NbodyCudaErrors, TooLargeCaseFailsWithBytesNeededAndFree) {
  SKIP_WITHOUT_GPU();
  try {
    make_nbody_cuda(strategy(Layout::AoS, Precision::Fp64, Tiling::Shared), 2000000000, {}, {});
    FAIL() << "expected an Error for 2e9 fp64 bodies";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("need"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
}

TEST(NbodyCudaDevice, CopyBandwidthIsMeasured) {
  SKIP_WITHOUT_GPU();
  const double gbs = measure_device_copy_gbs(true);
  std::printf("[ info ] %s: device copy %.0f GB/s\n", query_device().name.c_str(), gbs);
  EXPECT_GT(gbs, 100.0);
}

// The FMA kernel's GFLOP/s counts 2 flops per FMA: it can approach, never pass, the FP32 peak of
// 128 lanes x 2 flops x SMs x the maximum clock (Hopper; 64 lanes in fp64), and fp64 is slower.
TEST(NbodyCudaDevice, FmaCeilingIsMeasuredBelowTheLanePeak) {
  SKIP_WITHOUT_GPU();
  const DeviceInfo d = query_device();
  const double f32 = measure_device_fma_gflops(false, true), f64 = measure_device_fma_gflops(true, true);
  const double lanes_peak = 128.0 * 2 * d.sm_count * d.clock_khz * 1e-6;  // GFLOP/s
  std::printf("[ info ] %s: FMA fp32 %.0f GFLOP/s, fp64 %.0f GFLOP/s (fp32 lane peak at %d MHz: %.0f)\n",
              d.name.c_str(), f32, f64, d.clock_khz / 1000, lanes_peak);
  EXPECT_GT(f32, f64);
  EXPECT_GT(f64, 0.0);
  if (d.cc_major == 9 && d.clock_khz > 0) {
    EXPECT_LT(f32, 1.02 * lanes_peak);
    EXPECT_GT(f32, 0.5 * lanes_peak);
    EXPECT_LT(f64, 1.02 * lanes_peak / 2);
  }
  EXPECT_EQ(measure_device_fma_gflops(false), f32);  // cached for the process
}

// `tiersim bench nbody` through the same registration, for GPU nodes where only the test
// binary is at hand: TIERSIM_BENCH_ARGS="--sizes 65536" ./tiersim_gpu_tests
// --gtest_also_run_disabled_tests --gtest_filter='*BenchNbody*'
TEST(NbodyCudaBench, DISABLED_BenchNbody) {
  SKIP_WITHOUT_GPU();
  CLI::App app("bench");
  register_bench_nbody(app);
  std::vector<std::string> args;
  std::istringstream in(std::getenv("TIERSIM_BENCH_ARGS") ? std::getenv("TIERSIM_BENCH_ARGS") : "");
  args.push_back("nbody");
  for (std::string a; in >> a;) args.push_back(a);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  app.parse(args);
}

}  // namespace
}  // namespace tiersim
