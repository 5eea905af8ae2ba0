// DIR/checkpoint.h5: what an exact restart needs (the model's state at a step boundary, in
// double precision, which holds fp32 and fp64 values exactly), written to a temporary file and
// renamed over the old one, so a run killed at any moment leaves the previous checkpoint whole.
// The arrays carry Fletcher32 checksums and the file's metadata its own (HDF5 1.10 format), so a
// damaged checkpoint is an error on reading, never a restart from wrong values. On several ranks
// a split state's arrays are virtual datasets over the parts the ranks wrote
// (io/state_parts.hpp), checksummed there; every part is checked to be present and whole.
//
// Besides the state, a checkpoint records what a restart checks the rest of the run against:
// the last snapshot at or before its step (the newest step file the restart keeps; each step file
// names the one before it), the observables computed since that snapshot (not yet in a step file),
// and how many bytes of telemetry.csv the run had written, with their fingerprint.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/host_array.hpp"
#include "io/output_format.hpp"

namespace tiersim {

inline constexpr const char* kCheckpointName = "checkpoint.h5";

struct ModelState {
  // Values in double; HostArray: a restart's gigabytes read in without being zeroed first, on huge
  // pages (base/host_array.hpp).
  std::vector<std::pair<std::string, HostArray<double>>> arrays;
  // Arrays of an fp32 run, kept and written in their own precision (half the bytes of doubles);
  // a checkpoint reads every array back into `arrays` (exact: each float is a double).
  std::vector<std::pair<std::string, std::vector<float>>> arrays_f32;
  // Arrays held elsewhere (a staged output's host buffers), written as they are, without a copy:
  // the memory must outlive the write. Read back into `arrays` like the others.
  struct Borrowed {
    std::string name;
    const void* data = nullptr;
    std::size_t count = 0;
    bool fp64 = false;
  };
  std::vector<Borrowed> borrowed;
  // Arrays the ranks of a run wrote in parts (io/state_parts.hpp) before the checkpoint: the
  // checkpoint names them (a virtual dataset over the parts of `step`, rank r's values from
  // first[r], count[r] of them); read back into `arrays` like the others.
  struct InParts {
    std::string name;
    std::int64_t step = 0;
    std::vector<std::int64_t> first, count;
    bool fp64 = false;
  };
  std::vector<InParts> in_parts;
  // arrays_f32 and borrowed copied into arrays as doubles (what restarts and tests read).
  void widen();
  std::vector<std::pair<std::string, double>> scalars;
  const HostArray<double>& array(const std::string& name) const;  // throws Error if missing
  double scalar(const std::string& name) const;
};

// What a restart checks the run's other files against (see above).
struct RestartRecord {
  bool present = false;                  // false: a checkpoint of an older tiersim (not continued)
  std::int64_t last_snapshot_step = -1;  // -1: none
  ObservableRows observables_since_snapshot;
  std::uint64_t telemetry_bytes = 0, telemetry_fnv1a = 0;
};

struct Checkpoint {
  std::int64_t step = 0;
  double time = 0;
  std::string model;      // "nbody", "stencil/heat", ...
  std::string case_toml;  // the effective case of the run
  ModelState state;
  RestartRecord record;
};

// Returns the bytes of the checkpoint file written. Arrays in parts: the parts must be in place.
std::uint64_t write_checkpoint(const std::string& dir, const Checkpoint& c);
// Throws Error "DIR: not a tiersim run directory (no checkpoint.h5)" and the like. arrays = false:
// the state's arrays are neither read nor checked (nor the parts they name): what a restart checks
// against the run's other files before it reads the state.
Checkpoint read_checkpoint(const std::string& dir, bool arrays = true);

}  // namespace tiersim
