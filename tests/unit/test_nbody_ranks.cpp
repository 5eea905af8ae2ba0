// The N-body bodies split among ranks (BodyPartition), without MPI: the partition, the byte
// ranges of a rank's positions in every layout, and engines that each own a part of the bodies
// against one engine that owns all (the position exchange between processes is
// tests/integration/test_mpi_nbody.sh's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "base/comm.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/nbody_engine.hpp"
#include "sim/initial_conditions.hpp"

using namespace tiersim;

namespace {

TEST(BodyPartition, EvenSplitIsAlignedAndCoversEveryBody) {
  for (int n : {0, 1, 2, 31, 32, 33, 1001, 2048, 4097})
    for (int ranks : {1, 2, 3, 4, 7}) {
      const std::int64_t blocks = (n + kBodySliceAlign - 1) / kBodySliceAlign;
      const int most = int((blocks + ranks - 1) / ranks) * kBodySliceAlign;
      for (int rank = 0; rank < ranks; ++rank) {
        const BodyPartition p = BodyPartition::even(n, ranks, rank);
        ASSERT_EQ(p.ranks(), ranks);
        ASSERT_EQ(p.first.front(), 0);
        ASSERT_EQ(p.first.back(), n);
        EXPECT_EQ(p.lo(), p.first[std::size_t(rank)]);
        EXPECT_EQ(p.hi(n), p.first[std::size_t(rank) + 1]);
        for (int r = 0; r < ranks; ++r) {
          const int lo = p.first[std::size_t(r)], hi = p.first[std::size_t(r) + 1];
          EXPECT_LE(lo, hi) << "n=" << n << " ranks=" << ranks << " r=" << r;
          EXPECT_LE(hi - lo, most) << "n=" << n << " ranks=" << ranks << " r=" << r;
          if (r > 0) {
            EXPECT_EQ(lo % kBodySliceAlign, 0) << "n=" << n << " ranks=" << ranks << " r=" << r;
          }
        }
      }
    }
  // One rank owns everything, as a default partition does.
  const BodyPartition one = BodyPartition::even(1001, 1, 0), none{};
  EXPECT_EQ(one.lo(), 0);
  EXPECT_EQ(one.hi(1001), 1001);
  EXPECT_EQ(none.ranks(), 1);
  EXPECT_EQ(none.hi(1001), 1001);
}

// Copying a rank's position ranges from one store into a zeroed one carries exactly the
// positions of its bodies (and no other body's), and the ranks' ranges of each kind lie in rank
// order without overlapping.
TEST(BodyPartition, PositionRangesHoldARanksPositions) {
  const int n = 1001, ranks = 3;
  for (const auto& l : Flag<Layout>::values)
    for (Precision prec : {Precision::Fp32, Precision::Fp64})
      with_layout_and_scalar(l.value, prec, [&](auto layout_tag, auto scalar_tag) {
        using T = typename decltype(scalar_tag)::type;
        using View = ParticleView<decltype(layout_tag)::value, T>;
        HostParticleStore<View> a(n);
        for (int i = 0; i < n; ++i) {
          a.view().set_pos(i, {T(i + 1), T(-i - 1), T(0.5 * i + 1)});
          a.view().set_mass(i, T(1));
          a.view().set_vel(i, {T(2), T(2), T(2)});
          a.view().set_acc(i, {T(3), T(3), T(3)});
        }
        const BodyPartition p = BodyPartition::even(n, ranks, 0);
        std::vector<std::array<ByteRange, View::kPositionRanges>> of;
        for (int r = 0; r < ranks; ++r)
          of.push_back(
              View::position_ranges(n, std::size_t(p.first[std::size_t(r)]), std::size_t(p.first[std::size_t(r) + 1])));
        for (int r = 0; r < ranks; ++r) {
          HostParticleStore<View> b(n);
          std::memset(b.data(), 0, b.bytes());
          for (const ByteRange& x : of[std::size_t(r)]) {
            ASSERT_LE(x.offset + x.bytes, b.bytes()) << name(l.value);
            std::memcpy(static_cast<char*>(b.data()) + x.offset, static_cast<char*>(a.data()) + x.offset, x.bytes);
          }
          for (int i = 0; i < n; ++i) {
            const bool own = i >= p.first[std::size_t(r)] && i < p.first[std::size_t(r) + 1];
            const Vec3<T> got = b.view().pos(i), want = own ? a.view().pos(i) : Vec3<T>{0, 0, 0};
            ASSERT_EQ(got.x, want.x) << name(l.value) << " rank " << r << " body " << i;
            ASSERT_EQ(got.y, want.y) << name(l.value) << " rank " << r << " body " << i;
            ASSERT_EQ(got.z, want.z) << name(l.value) << " rank " << r << " body " << i;
          }
          for (std::size_t k = 0; r > 0 && k < of[std::size_t(r)].size(); ++k) {
            EXPECT_GE(of[std::size_t(r)][k].offset, of[std::size_t(r) - 1][k].offset + of[std::size_t(r) - 1][k].bytes)
                << name(l.value) << " rank " << r << " range " << k;
          }
        }
      });
}

Bodies random_bodies(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), m(0.5, 1.5);
  Bodies b;
  b.resize(std::size_t(n));
  for (std::size_t i = 0; i < std::size_t(n); ++i) {
    b.pos[i] = {u(rng), u(rng), u(rng)};
    b.vel[i] = {u(rng), u(rng), u(rng)};
    b.acc[i] = {std::nan(""), std::nan(""), std::nan("")};  // forces must overwrite
    b.mass[i] = m(rng) / n;
  }
  return b;
}

struct Variant {
  Layout layout;
  Precision precision;
};

class NbodyCpuRanks : public ::testing::TestWithParam<Variant> {};

// Three engines, each owning a third of 1001 bodies (bounds 320 and 672), step as the model
// steps them, with the exchange done by hand (each engine given the owners' bodies): every body
// ends bit for bit as with one engine; the diagnostics, added over the three, agree to rounding.
TEST_P(NbodyCpuRanks, SplitEnginesMatchOneEngineBitForBit) {
  const auto [layout, precision] = GetParam();
  const int n = 1001, ranks = 3;
  Strategy s;
  s.layout = layout;
  s.precision = precision;
  const NbodyParams params{1.0, 0.05};
  const Bodies b0 = random_bodies(n, 77);
  auto one = make_nbody_cpu(s, n, params);
  std::vector<std::unique_ptr<NbodyEngine>> part;
  std::vector<BodyPartition> parts;
  for (int r = 0; r < ranks; ++r) {
    parts.push_back(BodyPartition::even(n, ranks, r));
    part.push_back(make_nbody_cpu(s, n, params, parts.back()));
  }
  auto exchange = [&] {
    Bodies merged;
    merged.resize(std::size_t(n));
    for (int r = 0; r < ranks; ++r) {
      const Bodies d = part[std::size_t(r)]->download();
      for (int i = parts[std::size_t(r)].lo(); i < parts[std::size_t(r)].hi(n); ++i) {
        merged.pos[std::size_t(i)] = d.pos[std::size_t(i)];
        merged.vel[std::size_t(i)] = d.vel[std::size_t(i)];
        merged.acc[std::size_t(i)] = d.acc[std::size_t(i)];
        merged.mass[std::size_t(i)] = d.mass[std::size_t(i)];
      }
    }
    for (auto& e : part) e->upload(merged);
  };
  one->upload(b0);
  one->compute_forces(true);
  for (auto& e : part) {
    e->upload(b0);
    e->compute_forces(true);
  }
  const double dt = 0.01;
  for (int step = 1; step <= 6; ++step) {
    const bool observed = step % 3 == 0;
    one->kick(0.5 * dt);
    one->drift(dt);
    one->compute_forces(observed);
    one->kick(0.5 * dt);
    for (auto& e : part) {
      e->kick(0.5 * dt);
      e->drift(dt);
    }
    exchange();
    for (auto& e : part) {
      e->compute_forces(observed);
      e->kick(0.5 * dt);
    }
  }
  const Bodies want = one->download();
  NbodyDiagnostics sum;
  for (int r = 0; r < ranks; ++r) {
    const Bodies got = part[std::size_t(r)]->download();
    for (int i = parts[std::size_t(r)].lo(); i < parts[std::size_t(r)].hi(n); ++i) {
      const std::size_t k = std::size_t(i);
      for (const auto& [what, g, w] :
           {std::tuple{"pos", got.pos[k], want.pos[k]}, std::tuple{"vel", got.vel[k], want.vel[k]},
            std::tuple{"acc", got.acc[k], want.acc[k]}}) {
        ASSERT_EQ(g.x, w.x) << what << ".x, rank " << r << ", body " << i;
        ASSERT_EQ(g.y, w.y) << what << ".y, rank " << r << ", body " << i;
        ASSERT_EQ(g.z, w.z) << what << ".z, rank " << r << ", body " << i;
      }
    }
    const NbodyDiagnostics d = part[std::size_t(r)]->diagnostics();
    sum.kinetic += d.kinetic, sum.potential += d.potential, sum.mass += d.mass;
    sum.momentum = sum.momentum + d.momentum;
    sum.angular_momentum = sum.angular_momentum + d.angular_momentum;
  }
  // Each engine's sums are compensated, in double: three nearly exact partial sums added, a few
  // units of 1.1e-16 apart from one engine's; 1e-14 relative for the energies and the mass. The
  // momenta are sums of terms up to ~1e-3 (m ~ 1e-3, |v| ~ 1): 1e-16 absolute. Measured (every
  // layout alike): kinetic 0; potential -1.2e-16 relative in fp32, 0 in fp64; momentum x 0 in
  // fp32, -3.5e-18 in fp64.
  const NbodyDiagnostics full = one->diagnostics();
  std::printf(
      "[ info ] %s/%s: three engines' sums minus one's: kinetic %.3g, potential %.3g (relative), momentum x %.3g\n",
      name(layout), name(precision), (sum.kinetic - full.kinetic) / full.kinetic,
      (sum.potential - full.potential) / std::fabs(full.potential), sum.momentum.x - full.momentum.x);
  EXPECT_NEAR(sum.kinetic, full.kinetic, 1e-14 * std::fabs(full.kinetic));
  EXPECT_NEAR(sum.potential, full.potential, 1e-14 * std::fabs(full.potential));
  EXPECT_NEAR(sum.mass, full.mass, 1e-14 * full.mass);
  for (const auto& [g, w] :
       {std::pair{sum.momentum, full.momentum}, std::pair{sum.angular_momentum, full.angular_momentum}}) {
    EXPECT_NEAR(g.x, w.x, 1e-16);
    EXPECT_NEAR(g.y, w.y, 1e-16);
    EXPECT_NEAR(g.z, w.z, 1e-16);
  }
}

std::vector<Variant> all_variants() {
  std::vector<Variant> v;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (const auto& l : Flag<Layout>::values) v.push_back({l.value, p});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, NbodyCpuRanks, ::testing::ValuesIn(all_variants()),
                         [](const ::testing::TestParamInfo<Variant>& i) {
                           return std::string(name(i.param.layout)) + "_" + name(i.param.precision);
                         });

// A rank's records count its own bodies: kick and drift over them, the forces on them from all n.
// The exchange needs as many processes as the partition has ranks; with one rank it does nothing.
TEST(NbodyCpuRanks, RecordsCountTheOwnedBodies) {
  const int n = 1001;
  const BodyPartition p = BodyPartition::even(n, 3, 1);
  const int owned = p.hi(n) - p.lo();
  auto e = make_nbody_cpu(Strategy{}, n, {1.0, 0.05}, p);
  e->upload(random_bodies(n, 3));
  set_telemetry_step(4);
  e->compute_forces(false);
  e->kick(0.01);
  e->drift(0.01);
  (void)e->diagnostics();
  const std::vector<KernelRecord> recs = e->take_records(true);
  set_telemetry_step(0);
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].kernel, "nbody_forces");
  EXPECT_EQ(recs[0].work, double(owned) * n);
  EXPECT_EQ(recs[0].bytes_compulsory, (n * 4.0 + owned * 3.0) * 4);  // all positions and masses, owned acc
  EXPECT_EQ(recs[1].kernel, "nbody_kick");
  EXPECT_EQ(recs[1].work, double(owned));
  EXPECT_EQ(recs[2].kernel, "nbody_drift");
  EXPECT_EQ(recs[2].work, double(owned));
  EXPECT_EQ(recs[3].kernel, "nbody_potential");
  EXPECT_EQ(recs[3].work, double(owned) * (n - 1));
  EXPECT_EQ(recs[4].kernel, "nbody_diagnostics");
  EXPECT_EQ(recs[4].work, double(owned));

  if (comm::size() == 1) {
    EXPECT_THROW(e->exchange_positions(), Error);
  }
  auto whole = make_nbody_cpu(Strategy{}, n, {1.0, 0.05});
  whole->upload(random_bodies(n, 3));
  whole->exchange_positions();
  EXPECT_TRUE(whole->take_records(true).empty());
}

}  // namespace
