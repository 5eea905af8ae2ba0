// Built when VTK is not found: `--format vtk` is refused (parse_formats) and VtkWriter cannot be made.
#include "io/vtk_output.hpp"

#include "io/snapshots.hpp"

namespace tiersim {

bool vtk_output_available() { return false; }

struct VtkWriter::Impl {};

VtkWriter::VtkWriter(const std::string&) {
  throw Error("VTK output: this tiersim was built without VTK (run scripts/setup, then configure and build "
              "again; the configure output says why VTK was not used)");
}
VtkWriter::~VtkWriter() = default;
void VtkWriter::write_particles(std::int64_t, double, const Bodies&, bool) {}
void VtkWriter::write_field(std::int64_t, double, const std::string&, const GridGeometry&, const float*) {}
void VtkWriter::write_field(std::int64_t, double, const std::string&, const GridGeometry&, const double*) {}
void VtkWriter::commit() {}
void VtkWriter::adopt_existing(const std::vector<std::pair<std::int64_t, double>>&,
                               const std::vector<std::pair<std::int64_t, double>>&) {}
std::string VtkWriter::particles_pvd() const { return {}; }
std::string VtkWriter::fields_pvd() const { return {}; }

}  // namespace tiersim
