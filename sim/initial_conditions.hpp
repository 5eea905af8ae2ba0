// Initial conditions for the N-body model, in double precision, seedable and reproducible: each
// body draws from its own counter-based random stream (splitmix of the case's seed, the
// population and the body's number), so the bodies are made in parallel on the OpenMP threads and
// are the same bit for bit whatever the thread count. All are shifted to the centre-of-mass frame.
#pragma once

#include <cstdint>

#include "layouts/particles.hpp"

namespace tiersim {

// Plummer sphere by Aarseth, Henon & Wielen (1974). scale_radius is the virial radius: with
// G = M = 1 and scale_radius = 1 these are standard N-body (Henon) units, E = -1/4.
Bodies make_plummer(int n, double total_mass, double virial_radius, double G, std::uint64_t seed);

// Cold (zero-velocity) homogeneous sphere of the given radius.
Bodies make_uniform_sphere(int n, double total_mass, double radius, std::uint64_t seed);

// Two Plummer spheres approaching along x with an impact parameter along y; bodies have equal
// masses, split between the clusters in the ratio of their masses.
Bodies make_collision(int n, double total_mass, double radius, double G, double separation, double impact_parameter,
                      double velocity, double mass_ratio, std::uint64_t seed);

// Two bodies on a Kepler orbit of the given period and eccentricity, starting at pericentre.
Bodies make_kepler_binary(double total_mass, double G, double period, double eccentricity, double mass_ratio);
// Semi-major axis of that orbit: a^3 = G M (P / 2 pi)^2.
double kepler_semi_major_axis(double total_mass, double G, double period);

// A rotating disk galaxy: a Plummer bulge holding bulge_fraction of the mass and an
// exponential disk (scale length radius/4) on circular orbits with the given dispersion and
// thickness (both relative).
Bodies make_disk_galaxy(int n, double total_mass, double radius, double G, double softening, double bulge_fraction,
                        double thickness, double dispersion, std::uint64_t seed);

// Moves to the centre-of-mass frame (position and velocity).
void to_centre_of_mass_frame(Bodies& b);

}  // namespace tiersim
