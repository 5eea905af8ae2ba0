// snapshots.h5, the index over the step files, in the H5MD 1.1 layout
// (https://www.nongnu.org/h5md/h5md.html):
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
//
// The index is small (steps, times, observables, telemetry, the mappings) and rewritten whole at
// every commit, under a temporary name renamed over the old one: HDF5 1.10 updates a file's
// metadata in place and in no crash-safe order, so an append-in-place file killed during a flush
// can name chunks past its own end (seen in CI: "addr overflow").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/hdf5_library.hpp"
#include "io/output_format.hpp"

namespace tiersim {

inline constexpr const char* kIndexName = "snapshots.h5";
inline constexpr const char* kStepDir = "snapshots.d";
inline constexpr const char* kCreator = "tiersim";

// snapshots.d/step_<step, 12 digits>.h5: relative to the run directory (and to snapshots.h5 and
// snapshots.xmf, which sit there).
std::string step_file_name(std::int64_t step);

// A name usable as one HDF5 link (observables and fields are single path components).
std::string link_name(const std::string& s, const std::string& what);

// What the index holds, in memory: everything commit() writes into snapshots.h5.
struct SnapshotIndex {
  RunInfo info;
  bool double_precision = false;  // particles stored as float64 (else float32)

  // Particles: one row per snapshot; mass and id live in the step file of the first row.
  struct ParticleRow {
    std::int64_t step;
    double time, box_edge;
  };
  std::uint64_t n_particles = 0;
  std::vector<ParticleRow> particle_rows;

  // Fields in order of creation, each with its rows (step, time).
  struct Field {
    std::string name;  // link name
    GridGeometry g;
    bool double_precision = false;
    std::vector<std::pair<std::int64_t, double>> rows;
  };
  std::vector<Field> fields;

  using Series = ObservableSeries;
  ObservableRows observables;

  // Telemetry rows, as /telemetry stores them.
  struct TelemetryEntry {
    std::int64_t step;
    std::string kernel, strategy, work_unit;
    double ms, bytes_compulsory, bytes_modelled, flops, work;
    bool l2_window;
    double l2_window_bytes, l2_hit_ratio;
  };
  bool has_telemetry = false;
  std::vector<TelemetryEntry> telemetry;
  std::string peak_source;
  double peak_gbs = 0;

  Field* find_field(const std::string& name);
  // Step of the last particle snapshot (-1 if none); of the last snapshot of any kind.
  std::int64_t last_particle_step() const;
  std::int64_t last_snapshot_step() const;
  // The steps of every snapshot the index names, in order, and their step files' relative names
  // (snapshots.d/step_...h5).
  std::vector<std::int64_t> steps() const;
  std::vector<std::string> step_files() const;
  // Drops the rows of `step` (a step whose file was not published).
  void drop_step(std::int64_t step);
};

// Writes `index` as DIR/snapshots.h5 (h5_path): into a temporary file renamed over the old one,
// so a reader sees the old index or the new one; on failure the old one stays.
void write_snapshot_index(const std::string& h5_path, const SnapshotIndex& index);

// One row of /telemetry as stored in HDF5 (strings as variable-length C strings), and its type.
struct TelemetryRow {
  std::int64_t step;
  const char* kernel;
  const char* strategy;
  double ms, bytes_compulsory, bytes_modelled, flops, work;
  const char* work_unit;
  std::int8_t l2_window;
  double l2_window_bytes, l2_hit_ratio;
};
Hdf5Handle telemetry_type(const std::string& file);

// Throws Error unless the open file `f` names tiersim as its H5MD creator.
void require_tiersim_file(const Hdf5Calls& h5, hid_t f);

}  // namespace tiersim
