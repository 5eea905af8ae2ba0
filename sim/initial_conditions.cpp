#include "sim/initial_conditions.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "base/vec.hpp"
#include "base/error.hpp"

namespace tiersim {
namespace {

constexpr double kPi = 3.14159265358979323846;

Vec3<double> random_direction(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), phi(0.0, 2 * kPi);
  const double z = u(rng), p = phi(rng), s = std::sqrt(1 - z * z);
  return {s * std::cos(p), s * std::sin(p), z};
}

// Plummer bodies in Henon units (G = M = 1, E = -1/4, scale length a = 3 pi / 16), appended.
void append_plummer(Bodies& b, int n, double mass_each, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double a = 3 * kPi / 16;
  for (int i = 0; i < n; ++i) {
    double r;
    do {  // cumulative mass X = r^3 / (1 + r^2)^(3/2); truncate the far tail (X < 0.999)
      const double x = u(rng);
      r = 1.0 / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    } while (r > 22.8 || !std::isfinite(r));
    // Speed in units of the escape speed: q with density g(q) = q^2 (1 - q^2)^(7/2), by rejection.
    double q, g;
    do {
      q = u(rng);
      g = 0.1 * u(rng);
    } while (g > q * q * std::pow(1 - q * q, 3.5));
    const double v = q * std::sqrt(2.0) * std::pow(1 + r * r, -0.25);
    b.pos.push_back(a * r * random_direction(rng));
    b.vel.push_back((v / std::sqrt(a)) * random_direction(rng));
    b.acc.push_back({0, 0, 0});
    b.mass.push_back(mass_each);
  }
}

void scale(Bodies& b, std::size_t from, double length, double speed) {
  for (std::size_t i = from; i < b.size(); ++i) {
    b.pos[i] = length * b.pos[i];
    b.vel[i] = speed * b.vel[i];
  }
}

void shift(Bodies& b, std::size_t from, Vec3<double> dx, Vec3<double> dv) {
  for (std::size_t i = from; i < b.size(); ++i) {
    b.pos[i] = b.pos[i] + dx;
    b.vel[i] = b.vel[i] + dv;
  }
}

}  // namespace

void to_centre_of_mass_frame(Bodies& b) {
  double m = 0;
  Vec3<double> x{0, 0, 0}, v{0, 0, 0};
  for (std::size_t i = 0; i < b.size(); ++i) {
    m += b.mass[i];
    x = x + b.mass[i] * b.pos[i];
    v = v + b.mass[i] * b.vel[i];
  }
  if (m <= 0) return;
  shift(b, 0, (-1.0 / m) * x, (-1.0 / m) * v);
}

Bodies make_plummer(int n, double total_mass, double virial_radius, double G, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bodies b;
  append_plummer(b, n, 1.0 / n, rng);
  to_centre_of_mass_frame(b);
  // From Henon units to (G, M, R): lengths scale by R, speeds by sqrt(G M / R).
  scale(b, 0, virial_radius, std::sqrt(G * total_mass / virial_radius));
  for (auto& m : b.mass) m *= total_mass;
  return b;
}

Bodies make_uniform_sphere(int n, double total_mass, double radius, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Bodies b;
  while (static_cast<int>(b.size()) < n) {
    const Vec3<double> p{u(rng), u(rng), u(rng)};
    if (dot(p, p) > 1.0) continue;
    b.pos.push_back(radius * p);
    b.vel.push_back({0, 0, 0});
    b.acc.push_back({0, 0, 0});
    b.mass.push_back(total_mass / n);
  }
  to_centre_of_mass_frame(b);
  return b;
}

Bodies make_collision(int n, double total_mass, double radius, double G, double separation,
                      double impact_parameter, double velocity, double mass_ratio, std::uint64_t seed) {
  if (n < 2)
    throw Error("nbody.count: " + std::to_string(n) +
                " is too few for nbody.ic = \"collision\" (two clusters need at least 2 bodies)");
  std::mt19937_64 rng(seed);
  const int n2 = std::clamp(static_cast<int>(std::lround(n * mass_ratio / (1 + mass_ratio))), 1, n - 1);
  const int n1 = n - n2;
  const double m_each = total_mass / n;
  Bodies b;
  append_plummer(b, n1, 1.0, rng);
  scale(b, 0, radius, std::sqrt(G * m_each * n1 / radius));
  shift(b, 0, {-0.5 * separation * radius, -0.5 * impact_parameter * radius, 0}, {0.5 * velocity, 0, 0});
  const std::size_t second = b.size();
  append_plummer(b, n2, 1.0, rng);
  // Same density scaling: the smaller cluster has radius ~ (M2/M1)^(1/3).
  const double r2 = radius * std::cbrt(double(n2) / n1);
  scale(b, second, r2, std::sqrt(G * m_each * n2 / r2));
  shift(b, second, {0.5 * separation * radius, 0.5 * impact_parameter * radius, 0}, {-0.5 * velocity, 0, 0});
  for (auto& m : b.mass) m = m_each;
  to_centre_of_mass_frame(b);
  return b;
}

double kepler_semi_major_axis(double total_mass, double G, double period) {
  return std::cbrt(G * total_mass * std::pow(period / (2 * kPi), 2));
}

Bodies make_kepler_binary(double total_mass, double G, double period, double e, double mass_ratio) {
  const double a = kepler_semi_major_axis(total_mass, G, period);
  const double m1 = total_mass / (1 + mass_ratio), m2 = total_mass - m1;
  const double r = a * (1 - e);                                       // pericentre distance
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

Bodies make_disk_galaxy(int n, double total_mass, double radius, double G, double softening,
                        double bulge_fraction, double thickness, double dispersion, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const int nb = std::clamp(static_cast<int>(std::lround(n * bulge_fraction)), 0, n);
  const int nd = n - nb;
  const double m_each = total_mass / n;
  const double bulge_radius = 0.2 * radius;  // virial radius of the bulge
  const double mb = m_each * nb, md = m_each * nd;
  Bodies b;
  if (nb > 0) {
    append_plummer(b, nb, 1.0, rng);
    scale(b, 0, bulge_radius, std::sqrt(G * mb / bulge_radius));
  }
  const double rd = radius / 4;  // exponential scale length
  const double a_bulge = bulge_radius * 3 * kPi / 16;
  auto enclosed = [&](double r) {
    const double bulge = mb * r * r * r / std::pow(r * r + a_bulge * a_bulge, 1.5);
    const double disk = md * (1 - (1 + r / rd) * std::exp(-r / rd));
    return bulge + disk;
  };
  for (int i = 0; i < nd; ++i) {
    double r;
    do {  // surface density ~ exp(-r/rd): r = rd * Gamma(2) sample, truncated at 2 radii
      r = -rd * std::log(u(rng) * u(rng));
    } while (r > 2 * radius);
    const double phi = 2 * kPi * u(rng);
    const double z = thickness * radius * gauss(rng);
    const double r_soft = std::sqrt(r * r + softening * softening);
    const double vc = std::sqrt(G * enclosed(r) * r * r / (r_soft * r_soft * r_soft));
    const double sigma = dispersion * vc;
    const double vr = sigma * gauss(rng), vt = vc + sigma * gauss(rng), vz = sigma * gauss(rng);
    b.pos.push_back({r * std::cos(phi), r * std::sin(phi), z});
    b.vel.push_back({vr * std::cos(phi) - vt * std::sin(phi), vr * std::sin(phi) + vt * std::cos(phi), vz});
    b.acc.push_back({0, 0, 0});
    b.mass.push_back(1.0);
  }
  for (auto& m : b.mass) m = m_each;
  to_centre_of_mass_frame(b);
  return b;
}

}  // namespace tiersim
