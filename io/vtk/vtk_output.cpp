// VTK XML output with VTK's own writers (see io/vtk_output.hpp).
#include "io/vtk_output.hpp"

#include <vtkCellArray.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <type_traits>

#include "base/error.hpp"
#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"

namespace fs = std::filesystem;

namespace tiersim {

bool vtk_output_available() { return true; }

namespace {

std::string file_name(const char* kind, std::int64_t step, const char* ext) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s_%012lld.%s", kind, static_cast<long long>(step), ext);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct Entry {
  std::int64_t step;
  double time;
  std::string file;  // relative to DIR
};

std::string pvd_text(const std::vector<Entry>& entries) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\"?>\n"
       "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
       "  <Collection>\n";
  for (const Entry& e : entries)
    o << "    <DataSet timestep=\"" << num(e.time) << "\" group=\"\" part=\"0\" file=\"" << e.file << "\"/>\n";
  o << "  </Collection>\n</VTKFile>\n";
  return o.str();
}

// VTK's writers open their file by name and truncate it, following a link. So they write into
// memory, and the bytes go to disk the way every file of a run does: a temporary file created
// exclusively, renamed over the target (io/safe_files.hpp).
// Returns the bytes written.
template <class Writer, class Data>
std::size_t write_vtk_atomically(const std::string& path, Data* data) {
  auto w = vtkSmartPointer<Writer>::New();
  w->WriteToOutputStringOn();
  w->SetInputData(data);
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();
  w->SetCompressorTypeToZLib();
  if (w->Write() != 1 || w->GetErrorCode() != 0)
    throw Error(path + ": VTK writer failed" +
                (w->GetErrorCode() ? " (VTK error code " + std::to_string(w->GetErrorCode()) + ")" : ""));
  require_real_directory(fs::path(path).parent_path().string());  // vtk/ is still the run's own
  const std::string text = w->GetOutputString();
  write_file_atomically(path, text);
  return text.size();
}

}  // namespace

struct VtkOutput::Impl {
  std::string dir;
  bool double_precision = false;
  std::vector<Entry> particles, fields;
  // Fields of one step gather here until the step changes or commit().
  vtkSmartPointer<vtkImageData> pending;
  std::int64_t pending_step = -1;
  double pending_time = 0;
  std::uint64_t bytes_written = 0;

  void flush_pending() {
    if (!pending) return;
    const std::string rel = "vtk/" + file_name("fields", pending_step, "vti");
    bytes_written += write_vtk_atomically<vtkXMLImageDataWriter>((fs::path(dir) / rel).string(), pending.Get());
    fields.push_back({pending_step, pending_time, rel});
    pending = nullptr;
  }

  template <class T>
  void write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g, const T* data) {
    if (pending && pending_step != step) flush_pending();
    if (pending) {
      // One .vti holds one grid: dimensions, origin and spacing must all match (the same grid
      // copied, so compared exactly).
      int d[3];
      double o[3], h[3];
      pending->GetDimensions(d);
      pending->GetOrigin(o);
      pending->GetSpacing(h);
      const bool same_dims = d[0] == g.nx && d[1] == g.ny && d[2] == g.nz;
      const bool same_origin = o[0] == g.origin[0] && o[1] == g.origin[1] && o[2] == g.origin[2];
      const bool same_spacing = h[0] == g.spacing[0] && h[1] == g.spacing[1] && h[2] == g.spacing[2];
      if (!same_dims || !same_origin || !same_spacing) {
        auto triple = [](const auto& a) {
          std::string t = "(";  // appends: GCC 12 misreads '"(" + string' (-Wrestrict false positive)
          t += num(a[0]);
          t += ", ";
          t += num(a[1]);
          t += ", ";
          t += num(a[2]);
          t += ")";
          return t;
        };
        const int gd[3] = {g.nx, g.ny, g.nz};
        const std::string what = !same_dims     ? "dimensions " + triple(gd) + " vs " + triple(d)
                                 : !same_origin ? "origin " + triple(g.origin) + " vs " + triple(o)
                                                : "spacing " + triple(g.spacing) + " vs " + triple(h);
        throw Error(dir + ": VTK output: field " + name + " at step " + std::to_string(step) +
                    " has another grid than the other fields of that step: " + what);
      }
    } else {
      pending = vtkSmartPointer<vtkImageData>::New();
      pending->SetDimensions(g.nx, g.ny, g.nz);
      pending->SetOrigin(g.origin[0], g.origin[1], g.origin[2]);
      pending->SetSpacing(g.spacing[0], g.spacing[1], g.spacing[2]);
      pending_step = step;
      pending_time = time;
    }
    using Array = std::conditional_t<std::is_same_v<T, double>, vtkDoubleArray, vtkFloatArray>;
    auto a = vtkSmartPointer<Array>::New();
    a->SetName(name.c_str());
    const vtkIdType n = vtkIdType(g.nx) * g.ny * g.nz;
    a->SetNumberOfValues(n);
    for (vtkIdType i = 0; i < n; ++i) a->SetValue(i, data[i]);
    pending->GetPointData()->AddArray(a);
    if (!pending->GetPointData()->GetScalars()) pending->GetPointData()->SetActiveScalars(name.c_str());
  }
};

VtkOutput::VtkOutput(const std::string& dir, bool double_precision) : impl_(std::make_unique<Impl>()) {
  impl_->dir = dir;
  impl_->double_precision = double_precision;
  std::error_code ec;
  fs::create_directories(dir, ec);  // the run directory (the caller's path); vtk/ is the run's own
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  require_real_directory((fs::path(dir) / "vtk").string(), /*create=*/true);
}

VtkOutput::~VtkOutput() = default;

void VtkOutput::write_particles(std::int64_t step, double time, const Bodies& b, double) {
  const bool double_precision = impl_->double_precision;
  const vtkIdType n = vtkIdType(b.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataType(double_precision ? VTK_DOUBLE : VTK_FLOAT);
  points->SetNumberOfPoints(n);
  vtkSmartPointer<vtkDataArray> vel, speed, mass;
  if (double_precision) {
    vel = vtkSmartPointer<vtkDoubleArray>::New();
    speed = vtkSmartPointer<vtkDoubleArray>::New();
    mass = vtkSmartPointer<vtkDoubleArray>::New();
  } else {
    vel = vtkSmartPointer<vtkFloatArray>::New();
    speed = vtkSmartPointer<vtkFloatArray>::New();
    mass = vtkSmartPointer<vtkFloatArray>::New();
  }
  vel->SetName("velocity");
  vel->SetNumberOfComponents(3);
  vel->SetNumberOfTuples(n);
  speed->SetName("speed");
  speed->SetNumberOfTuples(n);
  mass->SetName("mass");
  mass->SetNumberOfTuples(n);
  auto id = vtkSmartPointer<vtkTypeInt64Array>::New();
  id->SetName("id");
  id->SetNumberOfTuples(n);
  // One vertex cell per body: connectivity i, offsets 0..n.
  auto offsets = vtkSmartPointer<vtkTypeInt64Array>::New();
  auto conn = vtkSmartPointer<vtkTypeInt64Array>::New();
  offsets->SetNumberOfValues(n + 1);
  conn->SetNumberOfValues(n);
  for (vtkIdType i = 0; i < n; ++i) {
    const auto& p = b.pos[i];
    const auto& v = b.vel[i];
    points->SetPoint(i, p.x, p.y, p.z);
    vel->SetTuple3(i, v.x, v.y, v.z);
    speed->SetTuple1(i, std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z));
    mass->SetTuple1(i, b.mass[i]);
    id->SetValue(i, i);
    offsets->SetValue(i, i);
    conn->SetValue(i, i);
  }
  offsets->SetValue(n, n);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  verts->SetData(offsets, conn);
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  pd->SetPoints(points);
  pd->SetVerts(verts);
  pd->GetPointData()->AddArray(vel);
  pd->GetPointData()->AddArray(speed);
  pd->GetPointData()->AddArray(mass);
  pd->GetPointData()->AddArray(id);
  pd->GetPointData()->SetActiveScalars("speed");
  pd->GetPointData()->SetActiveVectors("velocity");
  const std::string rel = "vtk/" + file_name("particles", step, "vtp");
  impl_->bytes_written += write_vtk_atomically<vtkXMLPolyDataWriter>((fs::path(impl_->dir) / rel).string(), pd.Get());
  impl_->particles.push_back({step, time, rel});
}

void VtkOutput::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                            const float* data) {
  impl_->write_field(step, time, name, g, data);
}
void VtkOutput::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                            const double* data) {
  impl_->write_field(step, time, name, g, data);
}

void VtkOutput::commit() {
  impl_->flush_pending();
  for (const auto& [path, entries] : {std::pair{particles_pvd(), &impl_->particles}, {fields_pvd(), &impl_->fields}})
    if (!entries->empty()) {
      const std::string text = pvd_text(*entries);
      write_file_atomically(path, text);
      impl_->bytes_written += text.size();
    }
}

std::uint64_t VtkOutput::bytes_written() const { return impl_->bytes_written; }

void VtkOutput::write_particles_parts(std::int64_t, double, const ParticlesInParts&) {
  throw Error("--format vtk: the bodies are held in parts by the ranks of the run; VTK files hold whole arrays");
}

void VtkOutput::write_field_parts(std::int64_t, double, const std::string& name, const GridGeometry&,
                                  const FieldInParts&) {
  throw Error("--format vtk: field " + name + " is held in parts by the ranks of the run; VTK files hold whole grids");
}

void VtkOutput::resume(const SnapshotIndex& kept) {
  impl_->particles.clear();
  impl_->fields.clear();
  impl_->pending = nullptr;
  std::vector<std::pair<std::int64_t, double>> field_steps;
  for (const auto& f : kept.fields) field_steps.insert(field_steps.end(), f.rows.begin(), f.rows.end());
  std::sort(field_steps.begin(), field_steps.end());
  field_steps.erase(std::unique(field_steps.begin(), field_steps.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    field_steps.end());
  std::error_code ec;
  for (const auto& r : kept.particle_rows) {
    const std::string rel = "vtk/" + file_name("particles", r.step, "vtp");
    if (fs::exists(fs::path(impl_->dir) / rel, ec)) impl_->particles.push_back({r.step, r.time, rel});
  }
  for (const auto& [step, time] : field_steps) {
    const std::string rel = "vtk/" + file_name("fields", step, "vti");
    if (fs::exists(fs::path(impl_->dir) / rel, ec)) impl_->fields.push_back({step, time, rel});
  }
}

std::string VtkOutput::particles_pvd() const { return (fs::path(impl_->dir) / "particles.pvd").string(); }
std::string VtkOutput::fields_pvd() const { return (fs::path(impl_->dir) / "fields.pvd").string(); }

}  // namespace tiersim
