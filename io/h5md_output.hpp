// The H5MD/XDMF format: DIR/snapshots.d/step_<step>.h5 with the data of each output step
// (io/step_files.hpp), DIR/snapshots.h5, the H5MD 1.1 index over them (io/snapshot_index.hpp),
// and DIR/snapshots.xmf, the XDMF temporal collection ParaView opens directly (io/xdmf.hpp).
// Always written: the index is the run's H5MD record. Written so that a run killed at any moment
// leaves all of them readable up to the last complete snapshot: a step file appears by rename when
// complete, then the index that names it is rewritten and renamed, then the .xmf likewise.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/kernel_record.hpp"
#include "io/output_format.hpp"
#include "io/snapshot_index.hpp"
#include "io/state_parts.hpp"
#include "io/step_files.hpp"

namespace tiersim {

class H5mdOutput final : public OutputFormat {
 public:
  // A new run in DIR: creates snapshots.d/ (DIR must exist). Throws Error if DIR already holds
  // snapshots, unless `overwrite`.
  H5mdOutput(const std::string& dir, const RunInfo& info, bool double_precision, bool xdmf, bool overwrite);
  // A restart in DIR: resume() gives it the snapshots it continues after.
  H5mdOutput(const std::string& dir, bool xdmf);
  ~H5mdOutput() override = default;

  void write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) override;
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const float* data) override;
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const double* data) override;
  // The step file's arrays are virtual datasets over the parts (which must be in place).
  void write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts) override;
  // The step file's field is a virtual dataset over the parts (which must be in place).
  void write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                         const FieldInParts& parts) override;
  // Observables: /observables/<name>/{step,time,value}.
  void write_observables(std::int64_t step, double time, const std::vector<std::pair<std::string, double>>& values);
  // /telemetry table (end of run). Appends: a resumed run adds its rows after the kept ones.
  void write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs, const std::string& peak_source);

  // Order matters for a reader at any moment: step files complete, then the index that names
  // them, then the .xmf that names both.
  void commit() override;
  // Adopts `kept` as the index, commits it and removes the step files it does not name.
  void resume(const SnapshotIndex& kept) override;
  std::vector<OwnedName> owned_names() const override { return names(); }
  std::uint64_t bytes_written() const override { return bytes_written_; }
  static std::vector<OwnedName> names() {
    // The parts of a state the ranks of a run wrote (io/state_parts.hpp) live beside the step files.
    return {OwnedName::exact("", kIndexName), OwnedName::exact("", "snapshots.xmf"),
            OwnedName::with_step(kStepDir, "step_", ".h5"), state_part_owned_name()};
  }

  // The step being written is not published (after a failed write, or when abandoned).
  void drop_open_step();

  // The observables computed after `step` (those after the last snapshot go into a checkpoint:
  // no step file holds them yet).
  ObservableRows observables_after(std::int64_t step) const;
  std::int64_t last_published_step() const { return published_; }

  const SnapshotIndex& index() const { return index_; }
  bool dirty() const { return dirty_; }
  const std::string& h5_path() const { return h5_path_; }
  const std::string& xmf_path() const { return xmf_path_; }

 private:
  // The checks and the index's row of the bodies of `step`; `write(first)` writes them into the
  // step file (first: the run's first particle snapshot, which holds mass and id too).
  template <class W>
  void write_particles_with(std::int64_t step, double time, std::uint64_t n, double box_edge, W&& write);
  template <class T>
  void write_field_data(std::int64_t step, double time, const std::string& name, const GridGeometry& g, const T* data);
  // The checks and the index's row of a field of `step`; `write` writes it into the step file.
  template <class W>
  void write_field_with(std::int64_t step, double time, const std::string& name, const GridGeometry& g, bool dp,
                        W&& write);

  // Writes the open step's record (its time, the snapshot before it, the run's parameters, the
  // observables since) and publishes it.
  void close_step();
  // `write()` into the step file of `step` (the one open before, if another, closed first); if it
  // throws, the step is dropped, unpublished.
  template <class W>
  void write_into_step(std::int64_t step, double time, W&& write);

  std::string dir_, h5_path_, xmf_path_;
  bool xdmf_;
  SnapshotIndex index_;
  StepFileWriter steps_;
  std::int64_t published_ = -1;  // the step of the last step file published (-1: none)
  double open_time_ = 0;         // the time of the step being written
  bool dirty_ = false;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace tiersim
