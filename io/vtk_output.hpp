// VTK XML output behind `--format vtk`, one file per snapshot written with VTK's own writers, and a
// .pvd time collection:
//   DIR/particles.pvd   -> DIR/vtk/particles_<step>.vtp  (vertex cells; velocity, speed, mass, id)
//   DIR/fields.pvd      -> DIR/vtk/fields_<step>.vti     (every field written at that step)
// Built from io/vtk/ when VTK is found, else io/vtk_disabled/ (where the format is refused).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/output_format.hpp"

namespace tiersim {

// True when this build can write VTK files.
bool vtk_output_available();

class VtkOutput final : public OutputFormat {
 public:
  // Creates DIR/vtk. Throws Error if VTK is not available or the directory cannot be created.
  VtkOutput(const std::string& dir, bool double_precision);
  ~VtkOutput() override;
  VtkOutput(const VtkOutput&) = delete;
  VtkOutput& operator=(const VtkOutput&) = delete;

  void write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) override;
  // Fields of one step are gathered into one .vti, written at commit() or when the step changes.
  // Throws Error if a field's grid (dimensions, origin or spacing) differs from that of the fields
  // already gathered for the step.
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const float* data) override;
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const double* data) override;
  // Writes pending files and rewrites the .pvd collections (atomic rename).
  void commit() override;
  // Restart: the .pvd collections list exactly the snapshots `kept` holds whose .vtp/.vti files
  // exist on disk; every other entry is forgotten (a file of a later step stays on disk unlisted
  // until that step is written again).
  void resume(const SnapshotIndex& kept) override;
  std::vector<OwnedName> owned_names() const override { return names(); }
  std::uint64_t bytes_written() const override;
  // VTK files hold whole arrays: refused (Error).
  void write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts) override;
  void write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                         const FieldInParts& parts) override;

  static std::vector<OwnedName> names() {
    return {OwnedName::exact("", "particles.pvd"), OwnedName::exact("", "fields.pvd"),
            OwnedName::with_step("vtk", "particles_", ".vtp"), OwnedName::with_step("vtk", "fields_", ".vti")};
  }

  std::string particles_pvd() const;
  std::string fields_pvd() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiersim
