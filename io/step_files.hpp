// One HDF5 file per output step, DIR/snapshots.d/step_<step>.h5: the data of that step, and what a
// restart needs to rebuild the index from the step files alone (snapshots.h5 is derived from them):
//   attributes  step, time, previous_step (the snapshot before this one; -1 for the run's first)
//   /parameters attributes case, case_source, strategy, model, device, creator_version, precision
//   /particles  position[N][3], velocity[N][3] (the first particle step also mass[N], id[N]);
//               attribute box_edge
//   /fields/<name>[nz][ny][nx]  attributes origin[3], spacing[3]
//   /observables/<name>/{step, time, value}  the diagnostics computed since the previous snapshot
//               (Fletcher32 checksums on every chunk)
// A run's particle and field arrays are virtual datasets over the parts its ranks wrote
// (io/state_parts.hpp; one rank: one part), which must be there (id excepted: written whole).
// Written in the HDF5 1.10 file format, whose superblock and object headers carry checksums: damaged
// metadata is an error on reading. A step file is written under a .tmp name and renamed when complete
// (close()); one renamed into place is never reopened, since readers may be reading it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/hdf5_library.hpp"
#include "io/output_format.hpp"

namespace tiersim {

// What a step file says about itself besides its arrays (written by close()).
struct StepFileRecord {
  double time = 0;
  std::int64_t previous_step = -1;
  const RunInfo* info = nullptr;
  bool double_precision = false;
  ObservableRows observables;  // the rows since the previous snapshot
};

class StepFileWriter {
 public:
  explicit StepFileWriter(std::string dir) : dir_(std::move(dir)) {}
  ~StepFileWriter() { drop(); }
  StepFileWriter(const StepFileWriter&) = delete;
  StepFileWriter& operator=(const StepFileWriter&) = delete;

  // Each writes into the file of `step`, created (under .tmp) unless it is the one open; another
  // step's file must have been closed first. A failure drops the step's file (drop()) and throws.
  // Particles in float64 where double_precision, else float32; mass and id in the first step only.
  void write_particles(std::int64_t step, const Bodies& b, bool double_precision, bool with_mass_and_id,
                       double box_edge);
  // The bodies as virtual datasets over slabs of other files (a state written in parts,
  // io/state_parts.hpp), names relative to snapshots.d/: position, velocity and mass, in order.
  void write_particles_parts(std::int64_t step, std::uint64_t n, bool double_precision, bool with_mass_and_id,
                             double box_edge, const std::array<std::vector<Hdf5Calls::SlabPart>, 3>& slabs);
  void write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const float* data);
  void write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const double* data);
  // The field as a virtual dataset over slabs of other files (a state written in parts by the
  // ranks of a run, io/state_parts.hpp), names relative to snapshots.d/.
  void write_field_parts(std::int64_t step, const std::string& name, const GridGeometry& g, bool double_precision,
                         const std::vector<Hdf5Calls::SlabPart>& parts);

  // Writes the record and renames the open step file into place (nothing when none is open). On
  // failure the step is dropped and Error names the file.
  void close(const StepFileRecord& record);

  // The step whose file is open (-1: none).
  std::int64_t open_step() const { return step_; }

  // After a failed write: the open step is not published; its .tmp goes (on a full disk that gives
  // the space back).
  void drop();

  // The steps dropped since the last call (by a failed write or close, or drop()): the index must
  // not name them.
  std::vector<std::int64_t> take_dropped() { return std::exchange(dropped_, {}); }

  std::string path(std::int64_t step) const;

 private:
  hid_t open(std::int64_t step);
  template <class T>
  void write_field_data(std::int64_t step, const std::string& name, const GridGeometry& g, const T* data);
  template <class F>
  void guarded(F&& f);

  std::string dir_;
  Hdf5Handle file_;
  std::int64_t step_ = -1;
  std::vector<std::int64_t> dropped_;
};

// What one step file holds, read back and checked (a restart's source): the record, and the shape
// of its arrays (not their values).
struct StepFileContents {
  std::int64_t step = 0, previous_step = -1;
  double time = 0;
  RunInfo info;
  bool double_precision = false;
  bool particles = false, mass_and_id = false;
  std::uint64_t n_particles = 0;
  double box_edge = 0;
  struct Field {
    std::string name;
    GridGeometry g;
    bool double_precision = false;
  };
  std::vector<Field> fields;
  ObservableRows observables;
};

// Reads the step file at `path`, which must hold step `step`. Throws Error naming the file when it
// is missing, a link, not HDF5, damaged (a checksum, a truncated file), of another step, or holds
// arrays of inconsistent shapes, or (with `parts`) when a part of the state its arrays name is
// missing or not theirs (require_step_file_parts).
StepFileContents read_step_file(const std::string& path, std::int64_t step, bool parts = true);
// Every part of the state the step file's arrays name is in place and holds what they take from it
// (io/state_parts.hpp: require_virtual_sources); Error naming the part otherwise.
void require_step_file_parts(const std::string& path);

}  // namespace tiersim
