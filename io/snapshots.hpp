// DIR/snapshots.h5 in the H5MD 1.1 layout, DIR/snapshots.d/step_<step>.h5 with the data of each
// output step, and DIR/snapshots.xmf, the XDMF temporal collection ParaView opens directly.
// Written so that a run killed at any moment leaves all of them readable up to the last complete
// snapshot: a step file is written under a .tmp name and renamed when complete; snapshots.h5 is
// rewritten whole at each commit() and renamed over the old one; then the .xmf likewise. Nothing
// is ever updated in place (HDF5 1.10 does not update a file crash-safely).
//
// Layout of snapshots.h5 (H5MD 1.1, https://www.nongnu.org/h5md/h5md.html):
//   /h5md                          attribute version = [1, 1]; author/{name}; creator/{name, version}
//   /particles/all/box             attributes dimension = 3, boundary = ["none", "none", "none"];
//                                  edges/{value[T][3], step, time}
//   /particles/all/position        {value[T][N][3], step[T], time[T]}
//   /particles/all/velocity        {value[T][N][3], step, time}  (step, time: hard links to position's)
//   /particles/all/mass, id        [N], time-independent (ids are the body index)
//   /observables/<name>            {value[T], step[T], time[T]}
//   /fields/<name>                 {value[T][nz][ny][nx], step[T], time[T]}; attributes origin[3],
//                                  spacing[3] (x, y, z order), shape [nx, ny, nz]
//   /parameters                    case (the effective TOML text), case_source, strategy, model,
//                                  device, creator_version: string datasets
//   /telemetry                     compound table, one row per kernel launch (end of run)
// Every value[T]... (and mass, id) is an HDF5 virtual dataset: row t maps onto the step file of
// step[t] (no copy; HDF5 finds the files relative to snapshots.h5, wherever the reader runs).
// A step file holds /particles/{position[N][3], velocity[N][3]} (the first one also mass[N],
// id[N]) and /fields/<name>[nz][ny][nx]; snapshots.xmf points at these.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/vtk_output.hpp"
#include "layouts/particles.hpp"
#include "base/kernel_record.hpp"
#include "base/strategy.hpp"

namespace tiersim {


struct RunInfo {
  std::string case_toml;   // the effective case
  std::string case_source; // path of the case file
  std::string strategy;    // "cuda/soa/fp32/shared"
  std::string model;       // "nbody", "stencil/heat", ...
  std::string creator_version;
  std::string device;      // "NVIDIA H100 80GB HBM3" or "CPU (2 OpenMP threads)"
};

struct GridGeometry {
  int nx = 0, ny = 0, nz = 0;
  double origin[3] = {0, 0, 0};
  double spacing[3] = {1, 1, 1};
};

struct SnapshotOptions {
  bool double_precision = false;  // particles stored as float64 (else float32)
  bool overwrite = false;         // replace snapshots.* already in DIR (the CLI's --force)
  OutputFormats formats;          // snapshots.xmf and/or VTK XML files besides snapshots.h5
};

class SnapshotFile {
 public:
  // Creates DIR (and parents) and the two files. Throws Error if DIR cannot be written or already
  // holds snapshots (unless options.overwrite).
  SnapshotFile(const std::string& dir, const RunInfo& info, bool double_precision);
  SnapshotFile(const std::string& dir, const RunInfo& info, const SnapshotOptions& options);

  // Continues a run in DIR (restart): opens DIR/snapshots.h5 for appending and drops every
  // snapshot, observable and telemetry row with step > keep_through_step, so that the restarted
  // run appends after it. Throws Error if DIR is not a tiersim run.
  static std::unique_ptr<SnapshotFile> resume(const std::string& dir, std::int64_t keep_through_step,
                                              const OutputFormats& formats = {});

  ~SnapshotFile();  // commits what was written (errors there are swallowed: call commit())
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;

  // Particles: appends one time-step to /particles/all/{position,velocity} (and mass, id once).
  // box_edge: edge of the cubic H5MD box (none/open boundaries; the extent of the data).
  void write_particles(std::int64_t step, double time, const Bodies& b, double box_edge);

  // Grid fields: data is the interior, x fastest, nx*ny*nz values.
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const float* data);
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const double* data);

  // Observables: /observables/<name>/{step,time,value}.
  void write_observables(std::int64_t step, double time,
                         const std::vector<std::pair<std::string, double>>& values);

  // /telemetry table (end of run). Appends: a resumed run adds its rows after the kept ones.
  void write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs, const std::string& peak_source);

  // Makes everything written so far durable and rewrites snapshots.xmf (atomic rename).
  void commit();

  // Step of the last particle snapshot written or kept (-1 if none).
  std::int64_t last_particle_step() const;
  // Step of the last snapshot of any kind (particles or fields) written or kept (-1 if none).
  std::int64_t last_snapshot_step() const;

  const std::string& h5_path() const;
  const std::string& xmf_path() const;

 private:
  struct Impl;
  struct ResumeTag {};
  SnapshotFile(const std::string& dir, std::int64_t keep_through_step, const OutputFormats& formats, ResumeTag);
  std::unique_ptr<Impl> impl_;
};

// ---- Reading back (restarts, initial conditions from a snapshot, tests) -------------------------

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
