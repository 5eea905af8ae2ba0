// A run's snapshots, in every format it writes: always the H5MD/XDMF format (DIR/snapshots.h5 over
// DIR/snapshots.d/step_<step>.h5, and DIR/snapshots.xmf; io/h5md_output.hpp), and VTK files with
// `--format vtk` (io/vtk_output.hpp). What the models and the time loop call: each write goes to
// every format, commit() commits them all. Nothing is ever updated in place, so a run killed at any
// moment leaves every format readable up to the last complete snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/kernel_record.hpp"
#include "base/strategy.hpp"
#include "io/output_format.hpp"
#include "layouts/particles.hpp"

namespace tiersim {

struct SnapshotIndex;  // io/snapshot_index.hpp

struct SnapshotOptions {
  bool double_precision = false;  // particles stored as float64 (else float32)
  bool overwrite = false;         // replace snapshots.* already in DIR (the CLI's --force)
  OutputFormats formats;          // snapshots.xmf and/or VTK XML files besides snapshots.h5
};

class SnapshotFile {
 public:
  // Creates DIR (and parents) and the files of every format. Throws Error if DIR cannot be written
  // or already holds snapshots (unless options.overwrite).
  SnapshotFile(const std::string& dir, const RunInfo& info, bool double_precision);
  SnapshotFile(const std::string& dir, const RunInfo& info, const SnapshotOptions& options);

  // Continues a run in DIR (restart) after the snapshots, observables and telemetry rows of `kept`
  // (io/restart_pruning.hpp rebuilds it, and checks it, from the step files and the checkpoint):
  // commits it in every format and removes the step files of later steps, so that the restarted
  // run appends after it.
  static std::unique_ptr<SnapshotFile> resume(const std::string& dir, const SnapshotIndex& kept,
                                              const OutputFormats& formats = {});

  ~SnapshotFile();  // commits what was written (errors there are swallowed: call commit())
  SnapshotFile(const SnapshotFile&) = delete;
  SnapshotFile& operator=(const SnapshotFile&) = delete;

  // Particles: appends one time-step to /particles/all/{position,velocity} (and mass, id once).
  // box_edge: edge of the cubic H5MD box (none/open boundaries; the extent of the data).
  void write_particles(std::int64_t step, double time, const Bodies& b, double box_edge);

  // Bodies the ranks of a run wrote in parts (io/state_parts.hpp), every part in place.
  void write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts);

  // Grid fields: data is the interior, x fastest, nx*ny*nz values.
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g, const float* data);
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g, const double* data);
  // A field the ranks of a run wrote in parts (io/state_parts.hpp), every part in place.
  void write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                         const FieldInParts& parts);

  // Observables: /observables/<name>/{step,time,value}.
  void write_observables(std::int64_t step, double time, const std::vector<std::pair<std::string, double>>& values);

  // /telemetry table (end of run). Appends: a resumed run adds its rows after the kept ones.
  void write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs, const std::string& peak_source);

  // Makes everything written so far durable and visible in every format (atomic renames).
  void commit();

  // The observables computed after the last snapshot published (a checkpoint holds them: no step
  // file does yet), and that snapshot's step (-1: none).
  ObservableRows observables_since_snapshot() const;
  std::int64_t last_published_step() const;

  // Step of the last particle snapshot written or kept (-1 if none).
  std::int64_t last_particle_step() const;
  // Step of the last snapshot of any kind (particles or fields) written or kept (-1 if none).
  std::int64_t last_snapshot_step() const;

  // Bytes of the files placed so far in every format (step files, indexes, collections).
  std::uint64_t bytes_written() const;

  const std::string& h5_path() const;
  const std::string& xmf_path() const;

 private:
  struct Impl;
  SnapshotFile();
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiersim
