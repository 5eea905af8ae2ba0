// The N-body initial conditions: reproducible for a seed, the same bit for bit whatever the number
// of OpenMP threads (each body draws from its own counter-based stream), and physically what each
// one says it is. Tolerances are stated where they are used.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/nbody_engine.hpp"
#include "sim/initial_conditions.hpp"

using namespace tiersim;

namespace {

struct Maker {
  std::string name;
  std::function<Bodies(int n, std::uint64_t seed)> make;
};

const std::vector<Maker>& makers() {
  static const std::vector<Maker> m = {
      {"plummer", [](int n, std::uint64_t s) { return make_plummer(n, 1.0, 1.0, 1.0, s); }},
      {"uniform", [](int n, std::uint64_t s) { return make_uniform_sphere(n, 2.0, 1.5, s); }},
      {"collision", [](int n, std::uint64_t s) { return make_collision(n, 1.0, 1.0, 1.0, 6.0, 1.0, 0.5, 0.5, s); }},
      {"galaxy", [](int n, std::uint64_t s) { return make_disk_galaxy(n, 1.0, 1.0, 1.0, 0.02, 0.2, 0.05, 0.1, s); }},
  };
  return m;
}

bool same_bits(const Bodies& a, const Bodies& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a.pos[i].x != b.pos[i].x || a.pos[i].y != b.pos[i].y || a.pos[i].z != b.pos[i].z || a.vel[i].x != b.vel[i].x ||
        a.vel[i].y != b.vel[i].y || a.vel[i].z != b.vel[i].z || a.mass[i] != b.mass[i])
      return false;
  return true;
}

// Thread counts 1, 2 and 5 give the same bodies bit for bit (20000 bodies: above the size from
// which the loops go parallel), the same seed the same bodies, another seed others.
TEST(InitialConditions, SameBodiesWhateverTheThreadCount) {
  const int threads = omp_get_max_threads();
  for (const Maker& m : makers()) {
    omp_set_num_threads(1);
    const Bodies one = m.make(20000, 17);
    for (int t : {2, 5}) {
      omp_set_num_threads(t);
      EXPECT_TRUE(same_bits(one, m.make(20000, 17))) << m.name << " with " << t << " threads";
    }
    omp_set_num_threads(threads);
    EXPECT_TRUE(same_bits(one, m.make(20000, 17))) << m.name;
    EXPECT_FALSE(same_bits(one, m.make(20000, 18))) << m.name << ": another seed gave the same bodies";
  }
}

// Every one is in its centre-of-mass frame, holds the total mass and is finite. To rounding: the
// mass-weighted sums of 5000 terms of size ~|x| M / n (|x| up to ~20 in the Plummer tails) round
// to ~1e-14 typically and ~5000 x 1.1e-16 x 3 = 2e-12 at worst; 1e-10 allows that and is far below
// any real offset (a body's own share of the centre is ~R / n = 2e-4).
TEST(InitialConditions, CentreOfMassFrameAndTotalMass) {
  for (const Maker& m : makers()) {
    const Bodies b = m.make(5000, 3);
    double mass = 0;
    Vec3<double> x{0, 0, 0}, v{0, 0, 0};
    for (std::size_t i = 0; i < b.size(); ++i) {
      ASSERT_TRUE(std::isfinite(b.pos[i].x) && std::isfinite(b.vel[i].z) && b.mass[i] > 0) << m.name << " body " << i;
      mass += b.mass[i];
      x = x + b.mass[i] * b.pos[i];
      v = v + b.mass[i] * b.vel[i];
    }
    const double want = m.name == "uniform" ? 2.0 : 1.0;
    EXPECT_NEAR(mass, want, 1e-12) << m.name;
    EXPECT_LT(std::sqrt(dot(x, x)) / mass, 1e-10) << m.name;
    EXPECT_LT(std::sqrt(dot(v, v)) / mass, 1e-10) << m.name;
  }
}

// Plummer in Henon units (G = M = R = 1): E = -1/4 and 2K/|W| = 1, within sampling noise
// ~ 1/sqrt(N) ~ 2% at N = 2000 (the potential from the CPU backend in float64). The uniform
// sphere is cold and inside its radius with mean radius 3/4 R (noise ~ 0.19 R / sqrt(N) = 0.004 R
// at N = 2000: 0.02 R allowed).
TEST(InitialConditions, PlummerIsVirialisedUniformSphereIsUniform) {
  const int n = 2000;
  for (std::uint64_t seed : {3, 4}) {
    Strategy s;
    s.precision = Precision::Fp64;
    auto e = make_nbody_cpu(s, n, {1.0, 0.0});
    e->upload(make_plummer(n, 1.0, 1.0, 1.0, seed));
    const NbodyDiagnostics d = e->diagnostics();
    EXPECT_NEAR(d.kinetic + d.potential, -0.25, 0.02) << "seed " << seed;
    EXPECT_NEAR(2 * d.kinetic / std::fabs(d.potential), 1.0, 0.08) << "seed " << seed;
    std::printf("[ info ] plummer seed %d: E = %.4f, 2K/|W| = %.4f\n", int(seed), d.kinetic + d.potential,
                2 * d.kinetic / std::fabs(d.potential));
  }
  const Bodies u = make_uniform_sphere(n, 1.0, 1.5, 3);
  double mean_r = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    EXPECT_EQ(dot(u.vel[i], u.vel[i]), 0.0);
    mean_r += std::sqrt(dot(u.pos[i], u.pos[i])) / n;
  }
  EXPECT_NEAR(mean_r, 0.75 * 1.5, 0.02 * 1.5);
}

// The two clusters of a collision: n2 = n q / (1 + q) bodies in the second, centred at +-s R / 2
// along x (their centres of mass within 0.1 R of there: each cluster's own centre wanders by
// ~R / sqrt(n) = 0.02 R), approaching at the given relative speed.
TEST(InitialConditions, CollisionClustersWhereAsked) {
  const int n = 3000;
  const double q = 0.5, sep = 6.0, speed = 0.5;
  const Bodies b = make_collision(n, 1.0, 1.0, 1.0, sep, 1.0, speed, q, 5);
  const int n2 = int(std::lround(n * q / (1 + q))), n1 = n - n2;
  Vec3<double> x1{0, 0, 0}, x2{0, 0, 0}, v1{0, 0, 0}, v2{0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const double w = 1.0 / (i < n1 ? n1 : n2);
    (i < n1 ? x1 : x2) = (i < n1 ? x1 : x2) + w * b.pos[std::size_t(i)];
    (i < n1 ? v1 : v2) = (i < n1 ? v1 : v2) + w * b.vel[std::size_t(i)];
  }
  EXPECT_NEAR(x2.x - x1.x, sep, 0.1);
  EXPECT_NEAR(x2.y - x1.y, 1.0, 0.1);  // impact parameter 1 R
  EXPECT_NEAR(v1.x - v2.x, speed, 0.05);
}

// Start-up for a large run: 2^20 Plummer bodies (reported, not bounded: the machine is shared).
TEST(InitialConditions, TimeToMakeAMillionPlummerBodies) {
  const auto t0 = std::chrono::steady_clock::now();
  const Bodies b = make_plummer(1 << 20, 1.0, 1.0, 1.0, 42);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(b.size(), std::size_t(1) << 20);
  std::printf("[ info ] 2^20 Plummer bodies in %.3f s on %d OpenMP threads\n", s, omp_get_max_threads());
}

}  // namespace
