#include "sim/initial_conditions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "base/error.hpp"
#include "base/vec.hpp"
#include "sim/counter_random.hpp"

namespace tiersim {
namespace {

// Loops over bodies run on the OpenMP threads; each body is written by one iteration only.
// Sums over bodies go through chunk_sums: fixed chunks summed in order, then the chunk sums in
// order, so they do not depend on the thread count either.
// (Below kParallelBodies one thread: a body takes about a microsecond, and a parallel region
// can wait milliseconds for a descheduled thread where cores are shared, kernels/cpu/nbody_cpu.cpp.)
constexpr std::int64_t kSumChunk = 4096;
constexpr std::int64_t kParallelBodies = 4096;

template <class F>
void for_each_body(std::size_t from, std::size_t to, F&& f) {
  const std::int64_t lo = std::int64_t(from), hi = std::int64_t(to);
#pragma omp parallel for schedule(static) if (hi - lo >= kParallelBodies)
  for (std::int64_t i = lo; i < hi; ++i) f(std::size_t(i));
}

// Mass, mass-weighted position and velocity of bodies [from, to).
struct MassMoments {
  double m = 0;
  Vec3<double> x{0, 0, 0}, v{0, 0, 0};
};
MassMoments mass_moments(const Bodies& b, std::size_t from, std::size_t to) {
  const std::int64_t chunks = (std::int64_t(to - from) + kSumChunk - 1) / kSumChunk;
  std::vector<MassMoments> part(std::size_t(std::max<std::int64_t>(chunks, 0)));
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    MassMoments s;
    const std::size_t lo = from + std::size_t(c * kSumChunk), hi = std::min(to, lo + std::size_t(kSumChunk));
    for (std::size_t i = lo; i < hi; ++i) {
      s.m += b.mass[i];
      s.x = s.x + b.mass[i] * b.pos[i];
      s.v = s.v + b.mass[i] * b.vel[i];
    }
    part[std::size_t(c)] = s;
  }
  MassMoments total;
  for (const MassMoments& s : part) {
    total.m += s.m;
    total.x = total.x + s.x;
    total.v = total.v + s.v;
  }
  return total;
}

// Plummer bodies in Henon units (G = M = 1, E = -1/4, scale length a = 3 pi / 16) into
// [from, from + n), body i drawing from stream `stream` as its number i - from.
void make_plummer_bodies(Bodies& b, std::size_t from, int n, double mass_each, std::uint64_t seed,
                         RandomStream stream) {
  const double a = 3 * std::numbers::pi / 16;
  for_each_body(from, from + std::size_t(n), [&](std::size_t i) {
    CounterRandom rng(seed, stream, i - from);
    double r;
    do {  // cumulative mass X = r^3 / (1 + r^2)^(3/2); truncate the far tail (X < 0.999)
      const double x = rng.uniform();
      r = 1.0 / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    } while (r > 22.8 || !std::isfinite(r));
    // Speed in units of the escape speed: q with density g(q) = q^2 (1 - q^2)^(7/2), by rejection.
    double q, g;
    do {
      q = rng.uniform();
      g = 0.1 * rng.uniform();
    } while (g > q * q * std::pow(1 - q * q, 3.5));
    const double v = q * std::sqrt(2.0) * std::pow(1 + r * r, -0.25);
    b.pos[i] = a * r * rng.direction();
    b.vel[i] = (v / std::sqrt(a)) * rng.direction();
    b.acc[i] = {0, 0, 0};
    b.mass[i] = mass_each;
  });
}

void scale(Bodies& b, std::size_t from, std::size_t to, double length, double speed) {
  for_each_body(from, to, [&](std::size_t i) {
    b.pos[i] = length * b.pos[i];
    b.vel[i] = speed * b.vel[i];
  });
}

void shift(Bodies& b, std::size_t from, std::size_t to, Vec3<double> dx, Vec3<double> dv) {
  for_each_body(from, to, [&](std::size_t i) {
    b.pos[i] = b.pos[i] + dx;
    b.vel[i] = b.vel[i] + dv;
  });
}

}  // namespace

void to_centre_of_mass_frame(Bodies& b) {
  const MassMoments s = mass_moments(b, 0, b.size());
  if (s.m <= 0) return;
  shift(b, 0, b.size(), (-1.0 / s.m) * s.x, (-1.0 / s.m) * s.v);
}

Bodies make_plummer(int n, double total_mass, double virial_radius, double G, std::uint64_t seed) {
  Bodies b;
  b.resize(std::size_t(n));
  make_plummer_bodies(b, 0, n, 1.0 / n, seed, kPlummerStream);
  to_centre_of_mass_frame(b);
  // From Henon units to (G, M, R): lengths scale by R, speeds by sqrt(G M / R).
  scale(b, 0, b.size(), virial_radius, std::sqrt(G * total_mass / virial_radius));
  for_each_body(0, b.size(), [&](std::size_t i) { b.mass[i] *= total_mass; });
  return b;
}

Bodies make_uniform_sphere(int n, double total_mass, double radius, std::uint64_t seed) {
  Bodies b;
  b.resize(std::size_t(n));
  for_each_body(0, b.size(), [&](std::size_t i) {
    CounterRandom rng(seed, kUniformStream, i);
    Vec3<double> p;
    do {  // a point of the cube [-1, 1]^3 until it falls in the unit ball
      p = {2 * rng.uniform() - 1, 2 * rng.uniform() - 1, 2 * rng.uniform() - 1};
    } while (dot(p, p) > 1.0);
    b.pos[i] = radius * p;
    b.vel[i] = {0, 0, 0};
    b.acc[i] = {0, 0, 0};
    b.mass[i] = total_mass / n;
  });
  to_centre_of_mass_frame(b);
  return b;
}

Bodies make_collision(int n, double total_mass, double radius, double G, double separation, double impact_parameter,
                      double velocity, double mass_ratio, std::uint64_t seed) {
  if (n < 2)
    throw Error("nbody.count: " + std::to_string(n) +
                " is too few for nbody.ic = \"collision\" (two clusters need at least 2 bodies)");
  const int n2 = std::clamp(static_cast<int>(std::lround(n * mass_ratio / (1 + mass_ratio))), 1, n - 1);
  const int n1 = n - n2;
  const double m_each = total_mass / n;
  const std::size_t second = std::size_t(n1), end = std::size_t(n);
  Bodies b;
  b.resize(end);
  make_plummer_bodies(b, 0, n1, m_each, seed, kPlummerStream);
  scale(b, 0, second, radius, std::sqrt(G * m_each * n1 / radius));
  shift(b, 0, second, {-0.5 * separation * radius, -0.5 * impact_parameter * radius, 0}, {0.5 * velocity, 0, 0});
  make_plummer_bodies(b, second, n2, m_each, seed, kSecondClusterStream);
  // Same density scaling: the smaller cluster has radius ~ (M2/M1)^(1/3).
  const double r2 = radius * std::cbrt(double(n2) / n1);
  scale(b, second, end, r2, std::sqrt(G * m_each * n2 / r2));
  shift(b, second, end, {0.5 * separation * radius, 0.5 * impact_parameter * radius, 0}, {-0.5 * velocity, 0, 0});
  to_centre_of_mass_frame(b);
  return b;
}

double kepler_semi_major_axis(double total_mass, double G, double period) {
  return std::cbrt(G * total_mass * std::pow(period / (2 * std::numbers::pi), 2));
}

Bodies make_kepler_binary(double total_mass, double G, double period, double e, double mass_ratio) {
  const double a = kepler_semi_major_axis(total_mass, G, period);
  const double m1 = total_mass / (1 + mass_ratio), m2 = total_mass - m1;
  const double r = a * (1 - e);                                          // pericentre distance
  const double v = std::sqrt(G * total_mass * (1 + e) / (a * (1 - e)));  // relative speed there
  Bodies b;
  b.resize(2);
  b.mass = {m1, m2};
  b.pos[0] = {-r * m2 / total_mass, 0, 0};
  b.pos[1] = {r * m1 / total_mass, 0, 0};
  b.vel[0] = {0, -v * m2 / total_mass, 0};
  b.vel[1] = {0, v * m1 / total_mass, 0};
  b.acc[0] = b.acc[1] = {0, 0, 0};
  return b;
}

Bodies make_disk_galaxy(int n, double total_mass, double radius, double G, double softening, double bulge_fraction,
                        double thickness, double dispersion, std::uint64_t seed) {
  const int nb = std::clamp(static_cast<int>(std::lround(n * bulge_fraction)), 0, n);
  const int nd = n - nb;
  const double m_each = total_mass / n;
  const double bulge_radius = 0.2 * radius;  // virial radius of the bulge
  const double mb = m_each * nb, md = m_each * nd;
  const std::size_t disk = std::size_t(nb), end = std::size_t(n);
  Bodies b;
  b.resize(end);
  if (nb > 0) {
    make_plummer_bodies(b, 0, nb, m_each, seed, kBulgeStream);
    scale(b, 0, disk, bulge_radius, std::sqrt(G * mb / bulge_radius));
  }
  const double rd = radius / 4;  // exponential scale length
  const double a_bulge = bulge_radius * 3 * std::numbers::pi / 16;
  auto enclosed = [&](double r) {
    const double bulge = mb * r * r * r / std::pow(r * r + a_bulge * a_bulge, 1.5);
    const double disk_mass = md * (1 - (1 + r / rd) * std::exp(-r / rd));
    return bulge + disk_mass;
  };
  for_each_body(disk, end, [&](std::size_t i) {
    CounterRandom rng(seed, kDiskStream, i - disk);
    double r;
    do {  // surface density ~ exp(-r/rd): r = rd * Gamma(2) sample, truncated at 2 radii
      r = -rd * std::log(rng.uniform() * rng.uniform());
    } while (r > 2 * radius);
    const double phi = 2 * std::numbers::pi * rng.uniform();
    const double z = thickness * radius * rng.gaussian();
    const double r_soft = std::sqrt(r * r + softening * softening);
    const double vc = std::sqrt(G * enclosed(r) * r * r / (r_soft * r_soft * r_soft));
    const double sigma = dispersion * vc;
    const double vr = sigma * rng.gaussian(), vt = vc + sigma * rng.gaussian(), vz = sigma * rng.gaussian();
    b.pos[i] = {r * std::cos(phi), r * std::sin(phi), z};
    b.vel[i] = {vr * std::cos(phi) - vt * std::sin(phi), vr * std::sin(phi) + vt * std::cos(phi), vz};
    b.acc[i] = {0, 0, 0};
    b.mass[i] = m_each;
  });
  to_centre_of_mass_frame(b);
  return b;
}

}  // namespace tiersim
