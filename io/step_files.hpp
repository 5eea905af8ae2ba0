// One HDF5 file per output step, DIR/snapshots.d/step_<step>.h5, holding the data of that step:
// /particles/{position[N][3], velocity[N][3]} (the first particle step also mass[N], id[N]) and
// /fields/<name>[nz][ny][nx], with the attribute step. A step file is written under a .tmp name
// and renamed when complete (close()); one renamed into place is never reopened, since readers may
// be reading it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/hdf5_library.hpp"
#include "io/output_format.hpp"

namespace tiersim {

class StepFileWriter {
 public:
  explicit StepFileWriter(std::string dir) : dir_(std::move(dir)) {}
  ~StepFileWriter() { drop(); }
  StepFileWriter(const StepFileWriter&) = delete;
  StepFileWriter& operator=(const StepFileWriter&) = delete;

  // Each writes into the file of `step`, created (under .tmp) unless it is the one open; the one
  // open before is closed first. A failure drops the step's file (drop()) and throws.
  // Particles in float64 where double_precision, else float32; mass and id in the first step only.
  void write_particles(std::int64_t step, const Bodies& b, bool double_precision, bool with_mass_and_id);
  void write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const float* data);
  void write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const double* data);

  // Renames the open step file into place (nothing when none is open). On failure the step is
  // dropped and Error names the file.
  void close();

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

}  // namespace tiersim
