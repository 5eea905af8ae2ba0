// Layout conversion and view accessors: every layout holds the same bodies.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>

#include "layouts/particles.hpp"

using namespace tiersim;

namespace {
Bodies random_bodies(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Bodies b;
  b.resize(n);
  for (int i = 0; i < n; ++i) {
    b.pos[i] = {u(rng), u(rng), u(rng)};
    b.vel[i] = {u(rng), u(rng), u(rng)};
    b.acc[i] = {u(rng), u(rng), u(rng)};
    b.mass[i] = 1.5 + u(rng);
  }
  return b;
}

template <class View>
struct LayoutTest : ::testing::Test {};
// Every view of the layout list (TIERSIM_PARTICLE_VIEWS), in both precisions.
template <class A, class B>
struct GTestTypes;
template <class... A, class... B>
struct GTestTypes<ViewList<A...>, ViewList<B...>> {
  using type = ::testing::Types<A..., B...>;
};
using Views = GTestTypes<ParticleViews<float>, ParticleViews<double>>::type;
TYPED_TEST_SUITE(LayoutTest, Views);

TYPED_TEST(LayoutTest, RoundTripThroughEveryOtherLayout) {
  using View = TypeParam;
  using T = typename View::scalar;
  const int n = 77;  // not a multiple of the AoSoA width
  const Bodies b = random_bodies(n, 42);
  HostParticleStore<View> store(n);
  store_bodies(b, store.view());
  HostParticleStore<SoAView<T>> soa(n);
  HostParticleStore<AoSView<T>> aos(n);
  HostParticleStore<Float4View<T>> f4(n);
  HostParticleStore<AoSoAView<T>> aosoa(n);
  convert_layout(store.view(), soa.view());
  convert_layout(soa.view(), aos.view());
  convert_layout(aos.view(), f4.view());
  convert_layout(f4.view(), aosoa.view());
  HostParticleStore<View> back(n);
  convert_layout(aosoa.view(), back.view());
  const Bodies r = load_bodies(back.view());
  const double tol = sizeof(T) == 4 ? 1e-7 * 2 : 0.0;
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(r.pos[i].x, b.pos[i].x, tol) << i;
    EXPECT_NEAR(r.pos[i].z, b.pos[i].z, tol) << i;
    EXPECT_NEAR(r.vel[i].y, b.vel[i].y, tol) << i;
    EXPECT_NEAR(r.acc[i].z, b.acc[i].z, tol) << i;
    EXPECT_NEAR(r.mass[i], b.mass[i], tol * 3) << i;
    const auto pm = back.view().pos_mass(i);
    EXPECT_EQ(pm.w, back.view().mass(i));
    EXPECT_EQ(pm.x, back.view().pos(i).x);
  }
}

TYPED_TEST(LayoutTest, FieldsDoNotOverlap) {
  // Writing one field of one body must leave every other field and body untouched.
  using View = TypeParam;
  using T = typename View::scalar;
  const int n = 40;
  HostParticleStore<View> store(n);
  store_bodies(random_bodies(n, 7), store.view());
  const Bodies before = load_bodies(store.view());
  store.view().set_vel(13, {T(100), T(200), T(300)});
  const Bodies after = load_bodies(store.view());
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(after.pos[i].x, before.pos[i].x);
    EXPECT_EQ(after.acc[i].y, before.acc[i].y);
    EXPECT_EQ(after.mass[i], before.mass[i]);
    if (i != 13) {
      EXPECT_EQ(after.vel[i].x, before.vel[i].x);
    }
  }
  EXPECT_EQ(after.vel[13].z, 300.0);
}

// with_layout turns every value of the --layout table into the view of that layout, and the
// list holds no view twice.
TEST(LayoutList, EveryFlagValueHasItsView) {
  std::set<Layout> seen;
  for (const auto& v : Flag<Layout>::values) {
    const Layout got = with_layout(v.value, [](auto tag) { return ParticleView<decltype(tag)::value, float>::layout; });
    EXPECT_EQ(got, v.value) << v.name;
    const auto [got64, scalar_bytes] = with_layout_and_scalar(v.value, Precision::Fp64, [](auto l, auto s) {
      using View = ParticleView<decltype(l)::value, typename decltype(s)::type>;
      return std::pair{View::layout, sizeof(typename View::scalar)};
    });
    EXPECT_EQ(got64, v.value) << v.name;
    EXPECT_EQ(scalar_bytes, sizeof(double)) << v.name;
    seen.insert(got);
  }
  EXPECT_EQ(seen.size(), ParticleViews<float>::size);
  EXPECT_THROW(with_layout(static_cast<Layout>(99), [](auto) { return 0; }), Error);
}

// The cost model each view answers (moved_bytes): the bytes per body the memory system moves for
// a set of fields. soa and aosoa move exactly the fields; float4 whole 4-wide vectors; aos the
// 32-byte sectors of its 40-byte (fp32) or 80-byte (fp64) records that the fields fall in.
TEST(LayoutList, MovedBytesPerBody) {
  const unsigned posm = field_mask(kX, 4), pos = field_mask(kX, 3), vel = field_mask(kVX, 3), acc = field_mask(kAX, 3);
  EXPECT_EQ(SoAView<float>::moved_bytes(posm), 16.0);
  EXPECT_EQ(AoSoAView<double>::moved_bytes(vel | acc), 48.0);
  EXPECT_EQ(Float4View<float>::moved_bytes(pos), 16.0);
  EXPECT_EQ(Float4View<float>::moved_bytes(vel | acc), 32.0);
  EXPECT_EQ(Float4View<double>::moved_bytes(posm | vel | acc), 96.0);
  // aos, counted by hand: fp32 records are 40 bytes, so x y z m (16 bytes at offset 0) start at
  // 0, 8, 16, 24 mod 32 in turn and touch 1, 1, 1, 2 sectors: 1.25 x 32 = 40 bytes. fp64 records
  // are 80 bytes, starting at 0 and 16 mod 32 in turn: x y z m (32 bytes) touch 1 and 2 sectors
  // (48 bytes), v and a (48 bytes at offset 32) 2 and 2 (64), x y z with v (bytes 0-24 and
  // 32-56) 2 and 3 (80).
  EXPECT_EQ(AoSView<float>::moved_bytes(posm), 40.0);
  EXPECT_EQ(AoSView<double>::moved_bytes(posm), 48.0);
  EXPECT_EQ(AoSView<double>::moved_bytes(vel | acc), 64.0);
  EXPECT_EQ(AoSView<double>::moved_bytes(pos | vel), 80.0);
  // The hot set (x y z m of every body) from the start of the store.
  EXPECT_EQ(SoAView<float>::hot_bytes(1000), 4 * SoAView<float>::stride(1000));
  EXPECT_EQ(Float4View<double>::hot_bytes(1000), Float4View<double>::stride(1000));
  EXPECT_EQ(AoSView<float>::hot_bytes(1000), AoSView<float>::bytes(1000));
}
}  // namespace
