#include "io/snapshots.hpp"

#include <hdf5.h>

#include <filesystem>

#include "base/error.hpp"
#include "io/h5md_output.hpp"
#include "io/vtk_output.hpp"

namespace fs = std::filesystem;

namespace tiersim {

struct SnapshotFile::Impl {
  std::unique_ptr<H5mdOutput> h5md;                   // always; the restart's record
  std::vector<std::unique_ptr<OutputFormat>> others;  // VTK with --format vtk

  template <class F>
  void each(F&& f) {
    f(static_cast<OutputFormat&>(*h5md));
    for (auto& o : others) f(*o);
  }
};

SnapshotFile::SnapshotFile() : impl_(std::make_unique<Impl>()) {}

SnapshotFile::SnapshotFile(const std::string& dir, const RunInfo& info, bool double_precision)
    : SnapshotFile(dir, info, SnapshotOptions{double_precision, false, OutputFormats{}}) {}

SnapshotFile::SnapshotFile(const std::string& dir, const RunInfo& info, const SnapshotOptions& options)
    : SnapshotFile() {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error(dir + ": output path exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  impl_->h5md =
      std::make_unique<H5mdOutput>(dir, info, options.double_precision, options.formats.xdmf, options.overwrite);
  if (options.formats.vtk) impl_->others.push_back(std::make_unique<VtkOutput>(dir, options.double_precision));
  commit();
}

std::unique_ptr<SnapshotFile> SnapshotFile::resume(const std::string& dir, const SnapshotIndex& kept,
                                                   const OutputFormats& formats) {
  std::unique_ptr<SnapshotFile> s(new SnapshotFile());
  s->impl_->h5md = std::make_unique<H5mdOutput>(dir, formats.xdmf);
  if (formats.vtk) s->impl_->others.push_back(std::make_unique<VtkOutput>(dir, kept.double_precision));
  // The other formats first: the H5MD resume removes the step files of dropped snapshots last.
  for (auto& o : s->impl_->others) {
    o->resume(kept);
    o->commit();
  }
  s->impl_->h5md->resume(kept);
  return s;
}

SnapshotFile::~SnapshotFile() {
  if (!impl_ || !impl_->h5md) return;
  try {
    if (impl_->h5md->dirty()) commit();
  } catch (...) {
    // A destructor cannot report; commit() is where errors are seen.
  }
  impl_->others.clear();
  impl_->h5md->drop_open_step();  // left open only by a failed commit: not published
  H5Eclear2(H5E_DEFAULT);
}

void SnapshotFile::write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) {
  impl_->each([&](OutputFormat& f) { f.write_particles(step, time, b, box_edge); });
}

void SnapshotFile::write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts) {
  impl_->each([&](OutputFormat& f) { f.write_particles_parts(step, time, parts); });
}

void SnapshotFile::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                               const float* data) {
  impl_->each([&](OutputFormat& f) { f.write_field(step, time, name, g, data); });
}
void SnapshotFile::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                               const double* data) {
  impl_->each([&](OutputFormat& f) { f.write_field(step, time, name, g, data); });
}
void SnapshotFile::write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                                     const FieldInParts& parts) {
  impl_->each([&](OutputFormat& f) { f.write_field_parts(step, time, name, g, parts); });
}

void SnapshotFile::write_observables(std::int64_t step, double time,
                                     const std::vector<std::pair<std::string, double>>& values) {
  impl_->h5md->write_observables(step, time, values);
}

void SnapshotFile::write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs,
                                   const std::string& peak_source) {
  impl_->h5md->write_telemetry(rows, peak_gbs, peak_source);
}

std::uint64_t SnapshotFile::bytes_written() const {
  std::uint64_t n = 0;
  impl_->each([&](OutputFormat& f) { n += f.bytes_written(); });
  return n;
}

void SnapshotFile::commit() {
  impl_->each([](OutputFormat& f) { f.commit(); });
}

ObservableRows SnapshotFile::observables_since_snapshot() const {
  return impl_->h5md->observables_after(impl_->h5md->last_published_step());
}
std::int64_t SnapshotFile::last_published_step() const { return impl_->h5md->last_published_step(); }

std::int64_t SnapshotFile::last_particle_step() const { return impl_->h5md->index().last_particle_step(); }
std::int64_t SnapshotFile::last_snapshot_step() const { return impl_->h5md->index().last_snapshot_step(); }

const std::string& SnapshotFile::h5_path() const { return impl_->h5md->h5_path(); }
const std::string& SnapshotFile::xmf_path() const { return impl_->h5md->xmf_path(); }

}  // namespace tiersim
