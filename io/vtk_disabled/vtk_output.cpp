// Built when VTK is not found: `--format vtk` is refused (parse_formats) and VtkOutput cannot be made.
#include "io/vtk_output.hpp"

#include "base/error.hpp"

namespace tiersim {

bool vtk_output_available() { return false; }

struct VtkOutput::Impl {};

VtkOutput::VtkOutput(const std::string&, bool) {
  throw Error(
      "VTK output: this tiersim was built without VTK (run scripts/setup, then configure and build "
      "again; the configure output says why VTK was not used)");
}
VtkOutput::~VtkOutput() = default;
void VtkOutput::write_particles(std::int64_t, double, const Bodies&, double) {}
void VtkOutput::write_field(std::int64_t, double, const std::string&, const GridGeometry&, const float*) {}
void VtkOutput::write_field(std::int64_t, double, const std::string&, const GridGeometry&, const double*) {}
void VtkOutput::commit() {}
void VtkOutput::resume(const SnapshotIndex&) {}
std::uint64_t VtkOutput::bytes_written() const { return 0; }
void VtkOutput::write_particles_parts(std::int64_t, double, const ParticlesInParts&) {}
void VtkOutput::write_field_parts(std::int64_t, double, const std::string&, const GridGeometry&, const FieldInParts&) {}
std::string VtkOutput::particles_pvd() const { return {}; }
std::string VtkOutput::fields_pvd() const { return {}; }

}  // namespace tiersim
