// DIR/checkpoint.h5: what an exact restart needs (the model's state at a step boundary, in
// double precision, which holds fp32 and fp64 values exactly), written to a temporary file and
// renamed over the old one, so a run killed at any moment leaves the previous checkpoint whole.
// The arrays carry Fletcher32 checksums and the file's metadata its own (HDF5 1.10 format), so a
// damaged checkpoint is an error on reading, never a restart from wrong values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tiersim {

inline constexpr const char* kCheckpointName = "checkpoint.h5";

struct ModelState {
  std::vector<std::pair<std::string, std::vector<double>>> arrays;
  std::vector<std::pair<std::string, double>> scalars;
  const std::vector<double>& array(const std::string& name) const;  // throws Error if missing
  double scalar(const std::string& name) const;
};

struct Checkpoint {
  std::int64_t step = 0;
  double time = 0;
  std::string model;      // "nbody", "stencil/heat", ...
  std::string case_toml;  // the effective case of the run
  ModelState state;
};

void write_checkpoint(const std::string& dir, const Checkpoint& c);
// Throws Error "DIR: not a tiersim run directory (no checkpoint.h5)" and the like.
Checkpoint read_checkpoint(const std::string& dir);

}  // namespace tiersim
