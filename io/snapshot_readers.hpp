// Reading a run's snapshots back through its index, snapshots.h5 (tests, tools, initial
// conditions from a snapshot). A restart does not use these: see io/restart_pruning.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/output_format.hpp"
#include "layouts/particles.hpp"

namespace tiersim {

// /parameters of DIR/snapshots.h5 (or of an .h5 path). Throws Error if it is not a tiersim file.
RunInfo read_run_info(const std::string& dir_or_h5);

// Steps of the particle snapshots in the file, in order.
std::vector<std::int64_t> particle_steps(const std::string& dir_or_h5);

struct ParticleSnapshot {
  std::int64_t step = 0;
  double time = 0;
  Bodies bodies;  // pos, vel, mass (acc zero)
};
// The particle snapshot with this step (step < 0: the last one). Throws Error if there is none.
ParticleSnapshot read_particles(const std::string& dir_or_h5, std::int64_t step = -1);

struct FieldSnapshot {
  std::int64_t step = 0;
  double time = 0;
  GridGeometry geometry;
  std::vector<double> values;  // x fastest
};
FieldSnapshot read_field(const std::string& dir_or_h5, const std::string& name, std::int64_t step = -1);

}  // namespace tiersim
