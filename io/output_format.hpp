// What every output format does, and which files it owns.
//
// A format (H5MD/XDMF in io/h5md_output.hpp, VTK in io/vtk_output.hpp) gets the arrays of a
// snapshot (write), makes everything written so far visible and durable, whole or not at all
// (commit), and on a restart continues from the snapshots a restart keeps (resume). The three are
// separate operations so that a writer thread can call them in order while the steps go on.
// Each format also names the files it owns, so that `--force` deletes nothing else.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "layouts/particles.hpp"

namespace tiersim {

struct SnapshotIndex;  // io/snapshot_index.hpp

// The run an output describes (H5MD's /parameters).
struct RunInfo {
  std::string case_toml;    // the effective case
  std::string case_source;  // path of the case file
  std::string strategy;     // "cuda/soa/fp32/shared"
  std::string model;        // "nbody", "stencil/heat", ...
  std::string creator_version;
  std::string device;  // "NVIDIA H100 80GB HBM3" or "CPU (2 OpenMP threads)"
};

// The values of one observable (total energy, ...) at the steps it was computed, in step order.
struct ObservableSeries {
  std::vector<std::int64_t> step;
  std::vector<double> time, value;
};
using ObservableRows = std::map<std::string, ObservableSeries>;  // by name

// Where a grid sits: points (i, j, k) at origin + (i, j, k) * spacing, x fastest in the data.
struct GridGeometry {
  int nx = 0, ny = 0, nz = 0;
  double origin[3] = {0, 0, 0};
  double spacing[3] = {1, 1, 1};
};

// Which formats a run writes besides snapshots.h5 (always written: the H5MD record).
struct OutputFormats {
  bool xdmf = true;  // DIR/snapshots.xmf
  bool vtk = false;  // DIR/*.pvd + DIR/vtk/*.vtp|*.vti
};

// "xdmf", "vtk", "xdmf,vtk" (comma-separated, any order). Throws Error with one line for an unknown
// name, an empty list, or vtk in a build without VTK.
OutputFormats parse_formats(const std::string& list);

// A file a format writes: an exact name, or, where `numbered`, prefix + decimal digits + suffix
// (a step number), in the run directory or in one of its subdirectories. A killed write may leave
// the same name with ".tmp" appended; that is the format's too.
struct OwnedName {
  std::string subdir;  // "" (the run directory itself) or a subdirectory the format owns
  std::string prefix;  // the whole name when not numbered
  std::string suffix;
  bool numbered = false;
  std::string infix;  // numbered twice: prefix, digits, infix, digits, suffix (a step and a rank)
  static OwnedName exact(std::string subdir, std::string name) {
    return {std::move(subdir), std::move(name), "", false, ""};
  }
  static OwnedName with_step(std::string subdir, std::string prefix, std::string suffix) {
    return {std::move(subdir), std::move(prefix), std::move(suffix), true, ""};
  }
  static OwnedName with_step_and_rank(std::string subdir, std::string prefix, std::string infix, std::string suffix) {
    return {std::move(subdir), std::move(prefix), std::move(suffix), true, std::move(infix)};
  }
  bool matches(const std::string& name) const;  // a name in `subdir`, with or without ".tmp"
};

// One array of a rank's part of a state split over ranks (io/state_parts.hpp): `count` values
// at `data` (float or double).
struct StatePartArray {
  std::string name;
  const void* data = nullptr;
  std::size_t count = 0;
  bool fp64 = false;
};

// A field held in the parts of a state split over ranks (io/state_parts.hpp): state array
// `array` of the parts of `step`, rank r's over planes [first_plane[r], first_plane[r] + planes[r]).
struct FieldInParts {
  std::string array;
  std::vector<std::int64_t> first_plane, planes;
  bool fp64 = false;
};

// Bodies held in the parts of a state split over ranks (io/state_parts.hpp): state arrays
// "position" and "velocity" (3 values per body) and "mass" of the parts of `step`, rank r's
// bodies [first[r], first[r] + count[r]).
struct ParticlesInParts {
  std::vector<std::int64_t> first, count;
  bool fp64 = false;
  double box_edge = 0;  // as write_particles'
};

class OutputFormat {
 public:
  virtual ~OutputFormat() = default;

  // write: the arrays of one snapshot; a step is complete when the next one starts or at commit().
  virtual void write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) = 0;
  virtual void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                           const float* data) = 0;
  virtual void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                           const double* data) = 0;
  // Bodies or a field whose values the ranks wrote in parts: the format names them, or refuses
  // (Error).
  virtual void write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts) = 0;
  virtual void write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                                 const FieldInParts& parts) = 0;

  // commit: everything written so far becomes visible (the format's collection files name it)
  // and durable; a reader, or a run killed at any moment, sees the previous commit or this one.
  virtual void commit() = 0;

  // resume (restart): continue after the snapshots of `kept` (the steps a restart keeps); files of
  // later steps are the format's to remove.
  virtual void resume(const SnapshotIndex& kept) = 0;

  // The files this format writes (the same for every run).
  virtual std::vector<OwnedName> owned_names() const = 0;

  // Bytes of the files this format has placed so far (data, indexes and collections, every time
  // one is written): what the disk was given.
  virtual std::uint64_t bytes_written() const = 0;
};

// The files of every output format (whichever a run used): what `--force` may delete.
std::vector<OwnedName> output_format_names();

}  // namespace tiersim
