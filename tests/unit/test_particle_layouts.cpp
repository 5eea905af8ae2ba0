// Layout conversion and view accessors: every layout holds the same bodies.
#include <gtest/gtest.h>

#include <random>

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
using Views = ::testing::Types<AoSView<float>, SoAView<float>, AoSoAView<float>, Float4View<float>, AoSView<double>,
                               SoAView<double>, AoSoAView<double>, Float4View<double>>;
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
}  // namespace
