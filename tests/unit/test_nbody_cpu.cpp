// The CPU N-body backend against a float64 brute-force reference, and the integrator against
// analytic orbits. Tolerances are stated where they are used.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <tuple>

#include "base/compensated_sum.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/nbody_engine.hpp"
#include "kernels/physics/gravity.hpp"
#include "sim/case.hpp"
#include "sim/initial_conditions.hpp"

using namespace tiersim;

namespace {

Bodies random_bodies(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), m(0.5, 1.5);
  Bodies b;
  b.resize(n);
  for (int i = 0; i < n; ++i) {
    b.pos[i] = {u(rng), u(rng), u(rng)};
    b.vel[i] = {u(rng), u(rng), u(rng)};
    b.acc[i] = {std::nan(""), std::nan(""), std::nan("")};  // poisoned: forces must overwrite
    b.mass[i] = m(rng) / n;
  }
  return b;
}

// Float64 brute force, written independently of the engine (no shared loop).
std::vector<Vec3<double>> reference_forces(const Bodies& b, double G, double eps) {
  const std::size_t n = b.size();
  std::vector<Vec3<double>> a(n, {0, 0, 0});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const Vec3<double> d = b.pos[j] - b.pos[i];
      const double r2 = dot(d, d) + eps * eps;
      if (r2 == 0) continue;
      a[i] = a[i] + (G * b.mass[j] / (r2 * std::sqrt(r2))) * d;
    }
  return a;
}

// The largest error of one body's acceleration relative to that body's reference magnitude.
double max_body_relative_error(const std::vector<Vec3<double>>& a, const std::vector<Vec3<double>>& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3<double> d = a[i] - ref[i];
    worst = std::max(worst, std::sqrt(dot(d, d) / dot(ref[i], ref[i])));
  }
  return worst;
}

double relative_error(const std::vector<Vec3<double>>& a, const std::vector<Vec3<double>>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3<double> d = a[i] - ref[i];
    num += dot(d, d);
    den += dot(ref[i], ref[i]);
  }
  return std::sqrt(num / den);
}

struct Variant {
  Layout layout;
  Precision precision;
};
std::string variant_name(const ::testing::TestParamInfo<Variant>& i) {
  return std::string(name(i.param.layout)) + "_" + name(i.param.precision);
}

class NbodyCpuVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(NbodyCpuVariants, ForcesMatchFloat64Reference) {
  const auto [layout, precision] = GetParam();
  for (int n : {1, 31, 1000}) {
    const Bodies b = random_bodies(n, 1234 + n);
    const NbodyParams p{0.7, 0.05};
    Strategy s;
    s.layout = layout;
    s.precision = precision;
    auto e = make_nbody_cpu(s, n, p);
    e->upload(b);
    e->compute_forces();
    const Bodies out = e->download();
    const auto ref = reference_forces(b, p.G, p.softening);
    for (const auto& a : out.acc) ASSERT_TRUE(std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z));
    if (n == 1) {  // a lone body feels nothing
      EXPECT_EQ(out.acc[0].x, 0.0);
      continue;
    }
    // fp32: rounding of a 1000-term sum with 1e-7 unit roundoff stays far below 1e-5.
    // Measured over all bodies (RMS): 4.9e-7 fp32, 1.3e-15 fp64 at n = 1000.
    const double tol = precision == Precision::Fp32 ? 1e-5 : 1e-13;
    EXPECT_LT(relative_error(out.acc, ref), tol) << "n=" << n;
    // And no single body is off: each body's error relative to its own |a|. Measured worst body
    // at n = 1000: 1.6e-6 fp32, 3.5e-15 fp64 (every layout the same); bounds about 6x that,
    // still within a 1000-term sum's rounding (sqrt(n) u ~ 2e-6 fp32, 4e-15 fp64, times a few).
    const double body_tol = precision == Precision::Fp32 ? 1e-5 : 2e-14;
    EXPECT_LT(max_body_relative_error(out.acc, ref), body_tol) << "n=" << n;
  }
}

TEST_P(NbodyCpuVariants, MomentumConservedToRounding) {
  const auto [layout, precision] = GetParam();
  const int n = 300;
  Bodies b = make_plummer(n, 1.0, 1.0, 1.0, 99);
  Strategy s;
  s.layout = layout;
  s.precision = precision;
  auto e = make_nbody_cpu(s, n, {1.0, 0.02});
  e->upload(b);
  e->compute_forces();
  for (int step = 0; step < 50; ++step) {
    e->kick(0.005);
    e->drift(0.01);
    e->compute_forces();
    e->kick(0.005);
  }
  const NbodyDiagnostics d = e->diagnostics();
  // Momentum scale: sum m|v| ~ 0.7 in these units; pairwise forces cancel to rounding.
  const double tol = precision == Precision::Fp32 ? 1e-5 : 1e-13;
  EXPECT_LT(std::fabs(d.momentum.x) + std::fabs(d.momentum.y) + std::fabs(d.momentum.z), tol);
}

// Every layout of the --layout table, in each precision.
std::vector<Variant> all_variants() {
  std::vector<Variant> v;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (const auto& l : Flag<Layout>::values) v.push_back({l.value, p});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, NbodyCpuVariants, ::testing::ValuesIn(all_variants()), variant_name);

class NbodyCpuPrecisions : public ::testing::TestWithParam<Precision> {};

TEST_P(NbodyCpuPrecisions, AllLayoutsGiveTheSameTrajectory) {
  const int n = 200;
  const Bodies b = make_plummer(n, 1.0, 1.0, 1.0, 5);
  std::vector<Bodies> finals;
  for (const auto& l : Flag<Layout>::values) {
    Strategy s;
    s.layout = l.value;
    s.precision = GetParam();
    auto e = make_nbody_cpu(s, n, {1.0, 0.05});
    e->upload(b);
    e->compute_forces();
    for (int step = 0; step < 30; ++step) {
      e->kick(0.005);
      e->drift(0.01);
      e->compute_forces();
      e->kick(0.005);
    }
    finals.push_back(e->download());
  }
  // Same arithmetic in the same order: the layouts agree bit for bit (tolerance 0), in every
  // component of position, velocity and the acceleration the next kick would use.
  const Bodies& ref = finals[0];
  for (std::size_t k = 1; k < finals.size(); ++k) {
    const Bodies& f = finals[k];
    ASSERT_EQ(f.size(), ref.size());
    for (int i = 0; i < n; ++i) {
      for (const auto& [what, got, want] :
           {std::tuple{"pos", f.pos[i], ref.pos[i]}, std::tuple{"vel", f.vel[i], ref.vel[i]},
            std::tuple{"acc", f.acc[i], ref.acc[i]}}) {
        ASSERT_EQ(got.x, want.x) << what << ".x, layout " << k << ", body " << i;
        ASSERT_EQ(got.y, want.y) << what << ".y, layout " << k << ", body " << i;
        ASSERT_EQ(got.z, want.z) << what << ".z, layout " << k << ", body " << i;
      }
      ASSERT_EQ(f.mass[i], ref.mass[i]) << "mass, layout " << k << ", body " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothPrecisions, NbodyCpuPrecisions, ::testing::Values(Precision::Fp32, Precision::Fp64),
                         [](const ::testing::TestParamInfo<Precision>& i) { return std::string(name(i.param)); });

// One Kepler orbit with leapfrog: the maximum relative energy error along the way and the
// distance from the start after one period (relative to the semi-major axis).
struct OrbitResult {
  double max_energy_error, return_distance;
};
OrbitResult kepler_orbit(Precision precision, int steps_per_orbit) {
  const double period = 2 * M_PI, e = 0.5;
  const Bodies b = make_kepler_binary(1.0, 1.0, period, e, 1.0);
  const double a = kepler_semi_major_axis(1.0, 1.0, period);
  Strategy s;
  s.precision = precision;
  auto eng = make_nbody_cpu(s, 2, {1.0, 0.0});
  eng->upload(b);
  eng->compute_forces();
  const auto d0 = eng->diagnostics();
  const double e0 = d0.kinetic + d0.potential;
  const double dt = period / steps_per_orbit;
  double max_err = 0;
  for (int k = 0; k < steps_per_orbit; ++k) {
    eng->kick(0.5 * dt);
    eng->drift(dt);
    eng->compute_forces();
    eng->kick(0.5 * dt);
    const auto d = eng->diagnostics();
    max_err = std::max(max_err, std::fabs((d.kinetic + d.potential - e0) / e0));
  }
  const Bodies end = eng->download();
  const Vec3<double> r0 = b.pos[1] - b.pos[0], r1 = end.pos[1] - end.pos[0];
  const Vec3<double> dr = r1 - r0;
  return {max_err, std::sqrt(dot(dr, dr)) / a};
}

TEST(NbodyCpu, KeplerBinaryFp64KeepsEnergyAndCloses) {
  const OrbitResult r = kepler_orbit(Precision::Fp64, 20000);
  EXPECT_LT(r.max_energy_error, 1e-6);  // stated: 1e-6 relative over one orbit, e = 0.5, P/dt = 20000
  EXPECT_LT(r.return_distance, 1e-4);   // stated: back within 1e-4 a after one period
}

TEST(NbodyCpu, KeplerBinaryFp32WithinLooserBound) {
  const OrbitResult r = kepler_orbit(Precision::Fp32, 20000);
  EXPECT_LT(r.max_energy_error, 1e-4);  // stated: fp32 rounding over 20000 steps (measured 2.3e-5)
  EXPECT_LT(r.return_distance, 5e-4);   // stated: back within 5e-4 a (measured 1.5e-4; fp64 4.4e-6)
}

TEST(NbodyCpu, LeapfrogEnergyErrorScalesAsDtSquared) {
  const double coarse = kepler_orbit(Precision::Fp64, 1000).max_energy_error;
  const double fine = kepler_orbit(Precision::Fp64, 2000).max_energy_error;
  const double ratio = coarse / fine;
  EXPECT_GT(ratio, 3.5) << coarse << " " << fine;  // second order: halving dt divides the error by ~4
  EXPECT_LT(ratio, 4.5) << coarse << " " << fine;
}

TEST(NbodyCpu, PlummerSphereIsInVirialEquilibrium) {
  const int n = 2000;
  auto e = make_nbody_cpu(Strategy{}, n, {1.0, 0.0});
  e->upload(make_plummer(n, 1.0, 1.0, 1.0, 3));
  const auto d = e->diagnostics();
  // Henon units: E = -1/4, 2K/|W| = 1; sampling noise ~ 1/sqrt(N) ~ 2%.
  EXPECT_NEAR(d.kinetic + d.potential, -0.25, 0.02);
  EXPECT_NEAR(2 * d.kinetic / std::fabs(d.potential), 1.0, 0.08);
}

// nbody.radius means what `tiersim keys` says it means: the Plummer sphere's virial radius (not
// its scale length), and for the galaxy a disk of scale length R/4 cut at 2R.
TEST(NbodyCpu, RadiusKeyMeansWhatItsDocumentationSays) {
  std::string doc;
  for (const auto& k : case_schema())
    if (k.key == "nbody.radius") doc = k.doc;
  EXPECT_NE(doc.find("plummer, collision (first cluster): virial radius"), std::string::npos) << doc;
  EXPECT_NE(doc.find("galaxy: disk scale length R/4, bodies out to 2R"), std::string::npos) << doc;

  // Plummer, R = 2: the virial radius G M^2 / (2 |W|) is R (a scale length of 2 would give
  // 2 * 16 / (3 pi) = 3.40). Sampling noise ~ 1/sqrt(N) ~ 2%; measured 1.997 (seed 3).
  const int n = 2000;
  const double R = 2.0;
  auto e = make_nbody_cpu(Strategy{}, n, {1.0, 0.0});
  e->upload(make_plummer(n, 1.0, R, 1.0, 3));
  EXPECT_NEAR(1.0 / (2 * std::fabs(e->diagnostics().potential)), R, 0.08 * R);

  // Galaxy, R = 2, no bulge: cylindrical radii below 2R; the median of an exponential disk of
  // scale length R/4 (surface density ~ exp(-r/rd), r ~ rd Gamma(2)) is 1.678 rd = 0.42 R.
  // Measured (seed 7): largest 4.003, median 0.827 (expected 0.839).
  const Bodies g = make_disk_galaxy(4000, 1.0, R, 1.0, 0.02, 0.0, 0.05, 0.05, 7);
  std::vector<double> rc;
  for (const auto& p : g.pos) rc.push_back(std::hypot(p.x, p.y));
  std::sort(rc.begin(), rc.end());
  EXPECT_LT(rc.back(), 2 * R * 1.01);  // (the centre-of-mass shift is far below 1%)
  EXPECT_GT(rc.back(), 1.5 * R);
  EXPECT_NEAR(rc[rc.size() / 2], 1.678 * R / 4, 0.05 * R);
}

// Every kernel goes through one recording path, the diagnostics included, each record with its
// cost model and stamped with the step that ran it: diagnostics() after an upload sums the
// potential in a pass of its own (nbody_potential) before the O(N) sums (nbody_diagnostics); after
// compute_forces(true) (nbody_forces_potential) only the sums run.
TEST_P(NbodyCpuPrecisions, DiagnosticsAreRecordedLikeEveryKernel) {
  const int n = 100;
  Strategy s;
  s.precision = GetParam();
  auto e = make_nbody_cpu(s, n, {1.0, 0.05});
  e->upload(make_plummer(n, 1.0, 1.0, 1.0, 9));
  (void)e->take_records(true);
  set_telemetry_step(7);
  (void)e->diagnostics();
  std::vector<KernelRecord> recs = e->take_records(true);
  const double scalar = GetParam() == Precision::Fp64 ? 8 : 4;
  ASSERT_EQ(recs.size(), 2u);
  const KernelRecord& p = recs[0];
  EXPECT_EQ(p.kernel, "nbody_potential");
  EXPECT_EQ(p.step, 7);
  EXPECT_EQ(p.strategy, std::string("cpu/soa/") + name(GetParam()));
  EXPECT_GE(p.ms, 0.0);
  EXPECT_EQ(p.bytes_compulsory, n * 4 * scalar + n * 8.0);  // positions and masses read, phi written
  EXPECT_EQ(p.work, double(n) * (n - 1));                   // each pair once for each of its bodies
  EXPECT_EQ(p.work_unit, "interactions");
  EXPECT_EQ(p.flops, kPotentialFlopsPerPair * n * (n - 1));
  const KernelRecord& d = recs[1];
  EXPECT_EQ(d.kernel, "nbody_diagnostics");
  EXPECT_EQ(d.step, 7);
  EXPECT_EQ(d.bytes_compulsory, n * (7 * scalar + 8.0));  // position, velocity, mass and phi read once
  EXPECT_EQ(d.bytes_modelled, d.bytes_compulsory);
  EXPECT_EQ(d.work, double(n));
  EXPECT_EQ(d.work_unit, "bodies");
  EXPECT_EQ(d.flops, 32.0 * n);

  set_telemetry_step(8);
  e->compute_forces(true);
  (void)e->diagnostics();
  recs = e->take_records(true);
  set_telemetry_step(0);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kernel, "nbody_forces_potential");
  EXPECT_EQ(recs[0].step, 8);
  EXPECT_EQ(recs[0].work, double(n) * n);
  EXPECT_EQ(recs[0].flops, kFlopsPerInteraction * n * n + double(n) * (n - 1));  // + the sum of each term
  EXPECT_EQ(recs[0].bytes_compulsory, n * 7 * scalar + n * 8.0);
  EXPECT_EQ(recs[1].kernel, "nbody_diagnostics");
}

// ---- the potential energy, summed beside the forces ----------------------------------------

// W = -G sum_{i<j} m_i m_j / sqrt(r_ij^2 + eps^2) in float64, written independently of the engine
// (pairs i < j, no self term), from the bodies as the engine holds them (rounded to its scalar).
// The n^2/2 terms are summed with Neumaier's compensation: a plain running sum of the 1.2e6 terms
// at n = 1531 is itself off by ~u sqrt(terms) ~ 1e-13, as much as the tolerance below.
double reference_potential(const Bodies& b, double G, double eps) {
  CompensatedSum w;
  for (std::size_t i = 0; i < b.size(); ++i)
    for (std::size_t j = i + 1; j < b.size(); ++j) {
      const Vec3<double> d = b.pos[j] - b.pos[i];
      w.add(-b.mass[i] * b.mass[j] / std::sqrt(dot(d, d) + eps * eps));
    }
  return G * w.value();
}

// Tolerances, relative to |W|. fp64: each term is within a few units of 1.1e-16, each body's
// sum rounds at most 255 times in a 256-term chunk and once per chunk in double: ~(256 + n/256) u
// = 3e-14 in the worst case; 1e-13. fp32: each term is rounded a few times at 6e-8, and each
// body's running fp32 sum of up to 256 terms adds at most 255 x 6e-8 = 1.5e-5 relative in the
// worst case, ~sqrt(256) x 6e-8 = 1e-6 typically, in errors of random sign that W's sum over n
// bodies (in double) averages further; 1e-6, the bound asked of fp32 runs (dE/E0 to resolve
// 1e-7). Measured (every layout alike): fp64 0 at n >= 31 (1.1e-16 at n = 2, a single term);
// fp32 5.6e-8 at n = 2, 5.3e-9 at 31, 1.1e-9 at 1000, 7.8e-10 at 1531.
double potential_tolerance(Precision p) { return p == Precision::Fp32 ? 1e-6 : 1e-13; }

TEST_P(NbodyCpuVariants, FusedPotentialMatchesFloat64Reference) {
  const auto [layout, precision] = GetParam();
  for (int n : {2, 31, 1000, 1531}) {  // 1531: not a multiple of the 16-body blocks or 256-term chunks
    Strategy s;
    s.layout = layout;
    s.precision = precision;
    const NbodyParams p{0.7, 0.05};
    auto e = make_nbody_cpu(s, n, p);
    e->upload(random_bodies(n, 4321 + n));
    e->compute_forces(true);
    const NbodyDiagnostics d = e->diagnostics();
    const double ref = reference_potential(e->download(), p.G, p.softening);
    const double err = std::fabs(d.potential - ref) / std::fabs(ref);
    EXPECT_LT(err, potential_tolerance(precision)) << "n=" << n;
    std::printf("[ info ] %s/%s n=%d: relative error of the potential %.3g (tolerance %.0e)\n", name(layout),
                name(precision), n, err, potential_tolerance(precision));
  }
}

// With and without the potential the accelerations are the same bit for bit.
TEST_P(NbodyCpuVariants, AccelerationsAreTheSameWithThePotential) {
  const auto [layout, precision] = GetParam();
  for (int n : {37, 1000}) {
    Strategy s;
    s.layout = layout;
    s.precision = precision;
    auto e = make_nbody_cpu(s, n, {0.7, 0.05});
    const Bodies b = random_bodies(n, 99 + n);
    e->upload(b);
    e->compute_forces(false);
    const Bodies plain = e->download();
    e->upload(b);  // acc poisoned again
    e->compute_forces(true);
    const Bodies fused = e->download();
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(std::isfinite(fused.acc[i].x)) << "n=" << n << " body " << i;
      ASSERT_EQ(fused.acc[i].x, plain.acc[i].x) << "n=" << n << " body " << i;
      ASSERT_EQ(fused.acc[i].y, plain.acc[i].y) << "n=" << n << " body " << i;
      ASSERT_EQ(fused.acc[i].z, plain.acc[i].z) << "n=" << n << " body " << i;
      ASSERT_EQ(fused.pos[i].x, plain.pos[i].x);
    }
  }
}

// diagnostics() with no fused pass since the positions changed sums the potential itself, with
// the same arithmetic (the same value bit for bit), leaving the accelerations as they are; after
// a drift it sums it again.
TEST_P(NbodyCpuVariants, PotentialWithoutAForcePassIsTheSame) {
  const auto [layout, precision] = GetParam();
  const int n = 600;
  Strategy s;
  s.layout = layout;
  s.precision = precision;
  auto e = make_nbody_cpu(s, n, {1.0, 0.05});
  e->upload(random_bodies(n, 5));  // accelerations NaN
  const double alone = e->diagnostics().potential;
  for (const auto& a : e->download().acc) ASSERT_TRUE(std::isnan(a.x) && std::isnan(a.y) && std::isnan(a.z));
  e->compute_forces(true);
  EXPECT_EQ(e->diagnostics().potential, alone);
  e->kick(0.01);  // velocities only: the potential stays current
  (void)e->take_records(true);
  (void)e->diagnostics();
  EXPECT_EQ(e->take_records(true).size(), 1u);  // nbody_diagnostics only
  e->drift(0.01);
  const double moved = e->diagnostics().potential;
  EXPECT_NE(moved, alone);
  e->compute_forces(true);
  EXPECT_EQ(e->diagnostics().potential, moved);
}

// The self term (m_i / eps with softening) is left out: a lone body has no potential energy, a
// pair exactly its own.
TEST_P(NbodyCpuPrecisions, PotentialLeavesTheSelfTermOut) {
  Strategy s;
  s.precision = GetParam();
  auto one = make_nbody_cpu(s, 1, {1.0, 0.05});
  one->upload(random_bodies(1, 3));
  one->compute_forces(true);
  EXPECT_EQ(one->diagnostics().potential, 0.0);
  auto two = make_nbody_cpu(s, 2, {2.0, 0.05});
  two->upload(random_bodies(2, 4));
  two->compute_forces(true);
  const Bodies b = two->download();
  const Vec3<double> d = b.pos[1] - b.pos[0];
  const double w = -2.0 * b.mass[0] * b.mass[1] / std::sqrt(dot(d, d) + 0.05 * 0.05);
  EXPECT_NEAR(two->diagnostics().potential, w, (GetParam() == Precision::Fp32 ? 1e-6 : 1e-15) * std::fabs(w));
}

// The diagnostics are the same bit for bit whatever the number of OpenMP threads (n = 1000 runs
// the pair loops in parallel).
TEST_P(NbodyCpuPrecisions, DiagnosticsDoNotDependOnTheThreadCount) {
  const int n = 1000;
  const int threads = omp_get_max_threads();
  std::vector<NbodyDiagnostics> got;
  for (int t : {1, 3}) {
    omp_set_num_threads(t);
    Strategy s;
    s.precision = GetParam();
    auto e = make_nbody_cpu(s, n, {1.0, 0.05});
    e->upload(random_bodies(n, 11));
    e->compute_forces(true);
    got.push_back(e->diagnostics());
  }
  omp_set_num_threads(threads);
  EXPECT_EQ(got[0].potential, got[1].potential);
  EXPECT_EQ(got[0].kinetic, got[1].kinetic);
  EXPECT_EQ(got[0].angular_momentum.z, got[1].angular_momentum.z);
}

}  // namespace

// The non-finite check rides on the diagnostics reduction: the first owned body whose velocity,
// position or acceleration holds NaN or an infinity, -1 where none; bodies a rank does not own
// are not looked at; with_potential = false makes no potential pass.
TEST(NbodyCpu, DiagnosticsFindTheFirstNonFiniteBodyOfEachArray) {
  const int n = 300;
  Bodies b = make_plummer(n, 1.0, 1.0, 1.0, 17);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Strategy s;
  s.backend = Backend::Cpu;
  auto e = make_nbody_cpu(s, n, {1.0, 0.05});
  e->upload(b);
  e->compute_forces();
  NbodyDiagnostics d = e->diagnostics(false);
  EXPECT_EQ(d.first_non_finite_velocity, -1);
  EXPECT_EQ(d.first_non_finite_position, -1);
  EXPECT_EQ(d.first_non_finite_acceleration, -1);
  b.vel[211].y = nan, b.vel[40].z = -inf, b.pos[7].x = inf, b.acc[299].z = nan;
  e->upload(b);  // the accelerations as uploaded (no force pass after it)
  d = e->diagnostics(false);
  EXPECT_EQ(d.first_non_finite_velocity, 40);
  EXPECT_EQ(d.first_non_finite_position, 7);
  EXPECT_EQ(d.first_non_finite_acceleration, 299);
  // A rank owning bodies 64.. only: body 7's position is another rank's to report.
  const BodyPartition part = BodyPartition::even(n, 2, 1);
  ASSERT_GT(part.lo(), 40);
  auto r = make_nbody_cpu(s, n, {1.0, 0.05}, part);
  b.vel[std::size_t(part.lo()) + 3].x = nan;
  r->upload(b);
  d = r->diagnostics(false);
  EXPECT_EQ(d.first_non_finite_velocity, part.lo() + 3);
  EXPECT_EQ(d.first_non_finite_position, -1);
  EXPECT_EQ(d.first_non_finite_acceleration, 299);
}
