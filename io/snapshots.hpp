// DIR/snapshots.h5 in the H5MD 1.1 layout, and DIR/snapshots.xmf, the XDMF temporal collection
// ParaView opens directly. Written so that a run killed at any moment leaves both readable up
// to the last complete snapshot (the .xmf is rewritten by atomic rename after the HDF5 file is
// flushed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layouts/particles.hpp"
#include "sim/core.hpp"

namespace tiersim {

class Telemetry;

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

class SnapshotFile {
 public:
  // Creates DIR (and parents) and the two files. Throws Error if DIR cannot be written.
  SnapshotFile(const std::string& dir, const RunInfo& info, bool double_precision);
  ~SnapshotFile();
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

  // /telemetry table (end of run).
  void write_telemetry(const Telemetry& t);

  // Makes everything written so far durable and rewrites snapshots.xmf (atomic rename).
  void commit();

  const std::string& h5_path() const;
  const std::string& xmf_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiersim
