// Output formats besides snapshots.h5 (always written: it is the H5MD record and the restart
// source), and the VTK XML writer behind `--format vtk`.
//
// VTK output, one file per snapshot written with VTK's own writers, and a .pvd time collection:
//   DIR/particles.pvd   -> DIR/vtk/particles_<step>.vtp  (vertex cells; velocity, speed, mass, id)
//   DIR/fields.pvd      -> DIR/vtk/fields_<step>.vti     (every field written at that step)
// Built from io/vtk/ when VTK is found, else io/vtk_disabled/ (where the option is refused).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layouts/particles.hpp"

namespace tiersim {

struct GridGeometry;

struct OutputFormats {
  bool xdmf = true;  // DIR/snapshots.xmf
  bool vtk = false;  // DIR/*.pvd + DIR/vtk/*.vtp|*.vti
};

// True when this build can write VTK files.
bool vtk_output_available();

// "xdmf", "vtk", "xdmf,vtk" (comma-separated, any order). Throws Error with one line for an unknown
// name, an empty list, or vtk in a build without VTK.
OutputFormats parse_formats(const std::string& list);

class VtkWriter {
 public:
  // Creates DIR/vtk. Throws Error if VTK is not available or the directory cannot be created.
  explicit VtkWriter(const std::string& dir);
  ~VtkWriter();
  VtkWriter(const VtkWriter&) = delete;
  VtkWriter& operator=(const VtkWriter&) = delete;

  void write_particles(std::int64_t step, double time, const Bodies& b, bool double_precision);
  // Fields of one step are gathered into one .vti, written at commit() or when the step changes.
  // Throws Error if a field's grid (dimensions, origin or spacing) differs from that of the fields
  // already gathered for the step.
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const float* data);
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                   const double* data);
  // Writes pending files and rewrites the .pvd collections (atomic rename).
  void commit();
  // Restart: the .pvd collections list exactly the given (step, time) pairs (the snapshots that
  // snapshots.h5 keeps) whose .vtp/.vti files exist on disk; every other entry is forgotten (a file
  // of a later step stays on disk unlisted until that step is written again).
  void adopt_existing(const std::vector<std::pair<std::int64_t, double>>& particle_steps,
                      const std::vector<std::pair<std::int64_t, double>>& field_steps);

  std::string particles_pvd() const;
  std::string fields_pvd() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tiersim
