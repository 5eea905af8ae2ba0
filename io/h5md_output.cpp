#include "io/h5md_output.hpp"

#include <filesystem>
#include <type_traits>

#include "base/error.hpp"
#include "io/safe_files.hpp"
#include "io/restart_pruning.hpp"
#include "io/state_parts.hpp"
#include "io/xdmf.hpp"

namespace fs = std::filesystem;

namespace tiersim {

namespace {
constexpr const char* kXmfName = "snapshots.xmf";
}  // namespace

H5mdOutput::H5mdOutput(const std::string& dir, const RunInfo& info, bool double_precision, bool xdmf, bool overwrite)
    : dir_(dir),
      h5_path_((fs::path(dir) / kIndexName).string()),
      xmf_path_((fs::path(dir) / kXmfName).string()),
      xdmf_(xdmf),
      steps_(dir) {
  silence_hdf5_errors();
  index_.info = info;
  index_.double_precision = double_precision;
  std::error_code ec;
  const std::string step_dir = (fs::path(dir) / kStepDir).string();
  for (const std::string& p : {h5_path_, xmf_path_, step_dir}) {
    if (fs::exists(p, ec)) {
      if (!overwrite) throw Error(p + ": already exists (the output directory holds a run; use --force to replace it)");
      fs::remove_all(p, ec);
      if (ec) throw Error(p + ": cannot remove: " + ec.message());
    }
  }
  require_real_directory(step_dir, /*create=*/true);
}

H5mdOutput::H5mdOutput(const std::string& dir, bool xdmf)
    : dir_(dir),
      h5_path_((fs::path(dir) / kIndexName).string()),
      xmf_path_((fs::path(dir) / kXmfName).string()),
      xdmf_(xdmf),
      steps_(dir) {
  silence_hdf5_errors();
}

void H5mdOutput::write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) {
  const std::uint64_t n = b.size();
  if (b.pos.size() != n || b.vel.size() != n) throw Error(h5_path_ + ": particles: inconsistent body arrays");
  write_particles_with(step, time, n, box_edge,
                       [&](bool first) { steps_.write_particles(step, b, index_.double_precision, first, box_edge); });
}

void H5mdOutput::write_particles_parts(std::int64_t step, double time, const ParticlesInParts& parts) {
  if (parts.fp64 != index_.double_precision)
    throw Error(h5_path_ + ": particles: the parts are not in the run's precision");
  std::uint64_t n = 0;
  for (const std::int64_t k : parts.count) n += std::uint64_t(k);
  write_particles_with(step, time, n, parts.box_edge, [&](bool first) {
    // A body is a row of each array ([N][3] or [N]): the parts' slabs are their bodies.
    auto slabs = [&](const char* array) { return state_part_slabs(step, array, parts.first, parts.count, true); };
    steps_.write_particles_parts(step, n, index_.double_precision, first, parts.box_edge,
                                 {slabs("position"), slabs("velocity"), slabs("mass")});
  });
}

template <class W>
void H5mdOutput::write_into_step(std::int64_t step, double time, W&& write) {
  if (steps_.open_step() >= 0 && steps_.open_step() != step) close_step();
  try {
    write();
  } catch (...) {
    drop_open_step();
    throw;
  }
  open_time_ = time;
}

template <class W>
void H5mdOutput::write_particles_with(std::int64_t step, double time, std::uint64_t n, double box_edge, W&& write) {
  const bool first = index_.particle_rows.empty();
  if (first) index_.n_particles = n;
  if (n != index_.n_particles)
    throw Error(h5_path_ + ": particles: " + std::to_string(n) + " bodies at step " + std::to_string(step) +
                ", the file holds " + std::to_string(index_.n_particles));
  if (!first && step <= index_.particle_rows.back().step)
    throw Error(h5_path_ + ": particles: step " + std::to_string(step) + " written after step " +
                std::to_string(index_.particle_rows.back().step));
  write_into_step(step, time, [&] { write(first); });
  index_.particle_rows.push_back({step, time, box_edge});
  dirty_ = true;
}

template <class T>
void H5mdOutput::write_field_data(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                                  const T* data) {
  write_field_with(step, time, name, g, std::is_same_v<T, double>,
                   [&](const std::string& n) { steps_.write_field(step, n, g, data); });
}

void H5mdOutput::write_field_parts(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                                   const FieldInParts& parts) {
  write_field_with(step, time, name, g, parts.fp64, [&](const std::string& n) {
    steps_.write_field_parts(step, n, g, parts.fp64,
                             state_part_slabs(step, parts.array, parts.first_plane, parts.planes, true));
  });
}

template <class W>
void H5mdOutput::write_field_with(std::int64_t step, double time, const std::string& name_in, const GridGeometry& g,
                                  bool dp, W&& write) {
  const std::string name = link_name(name_in, "field");
  if (g.nx <= 0 || g.ny <= 0 || g.nz <= 0)
    throw Error(h5_path_ + ": field " + name + ": grid " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" +
                std::to_string(g.nz) + " is empty");
  SnapshotIndex::Field* f = index_.find_field(name);
  if (f) {
    const GridGeometry& o = f->g;
    if (o.nx != g.nx || o.ny != g.ny || o.nz != g.nz)
      throw Error(h5_path_ + ": field " + name + ": grid changed from " + std::to_string(o.nx) + "x" +
                  std::to_string(o.ny) + "x" + std::to_string(o.nz) + " to " + std::to_string(g.nx) + "x" +
                  std::to_string(g.ny) + "x" + std::to_string(g.nz));
    if (f->double_precision != dp)
      throw Error(h5_path_ + ": field " + name + ": precision changed from " + (dp ? "fp32 to fp64" : "fp64 to fp32"));
    if (!f->rows.empty() && step <= f->rows.back().first)
      throw Error(h5_path_ + ": field " + name + ": step " + std::to_string(step) + " written after step " +
                  std::to_string(f->rows.back().first));
  }
  write_into_step(step, time, [&] { write(name); });
  if (!f) {
    index_.fields.push_back({name, g, dp, {}});
    f = &index_.fields.back();
  }
  f->rows.emplace_back(step, time);
  dirty_ = true;
}

void H5mdOutput::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                             const float* data) {
  write_field_data(step, time, name, g, data);
}
void H5mdOutput::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                             const double* data) {
  write_field_data(step, time, name, g, data);
}

void H5mdOutput::write_observables(std::int64_t step, double time,
                                   const std::vector<std::pair<std::string, double>>& values) {
  for (const auto& [raw, v] : values) {
    SnapshotIndex::Series& s = index_.observables[link_name(raw, "observable")];
    if (!s.step.empty() && step <= s.step.back())
      throw Error(h5_path_ + ": observable " + raw + ": step " + std::to_string(step) + " written after step " +
                  std::to_string(s.step.back()));
    s.step.push_back(step);
    s.time.push_back(time);
    s.value.push_back(v);
  }
  dirty_ = true;
}

void H5mdOutput::write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs, const std::string& peak_source) {
  if (!index_.has_telemetry) {
    index_.peak_source = peak_source;
    index_.peak_gbs = peak_gbs;
  }
  index_.has_telemetry = true;
  for (const auto& r : rows)
    index_.telemetry.push_back({r.step, r.rec.kernel, r.rec.strategy, r.rec.work_unit, r.rec.ms, r.rec.bytes_compulsory,
                                r.rec.bytes_modelled, r.rec.flops, r.rec.work, r.rec.l2_window, r.rec.l2_window_bytes,
                                r.rec.l2_hit_ratio});
  dirty_ = true;
}

ObservableRows H5mdOutput::observables_after(std::int64_t step) const {
  ObservableRows rows;
  for (const auto& [name, s] : index_.observables) {
    ObservableSeries& r = rows[name];
    for (std::size_t i = 0; i < s.step.size(); ++i)
      if (s.step[i] > step) {
        r.step.push_back(s.step[i]);
        r.time.push_back(s.time[i]);
        r.value.push_back(s.value[i]);
      }
    if (r.step.empty()) rows.erase(name);
  }
  return rows;
}

void H5mdOutput::close_step() {
  const std::int64_t step = steps_.open_step();
  if (step < 0) return;
  StepFileRecord record;
  record.time = open_time_;
  record.previous_step = published_;
  record.info = &index_.info;
  record.double_precision = index_.double_precision;
  for (auto& [name, s] : observables_after(published_)) {
    ObservableSeries& r = record.observables[name];
    for (std::size_t i = 0; i < s.step.size() && s.step[i] <= step; ++i) {
      r.step.push_back(s.step[i]);
      r.time.push_back(s.time[i]);
      r.value.push_back(s.value[i]);
    }
  }
  try {
    steps_.close(record);
  } catch (...) {
    drop_open_step();
    throw;
  }
  bytes_written_ += file_bytes(steps_.path(step));
  published_ = step;
}

void H5mdOutput::commit() {
  close_step();
  write_snapshot_index(h5_path_, index_);
  bytes_written_ += file_bytes(h5_path_);
  if (xdmf_) {
    const std::string xmf = xdmf_document(kIndexName, xdmf_collections(index_));
    write_file_atomically(xmf_path_, xmf);
    bytes_written_ += xmf.size();
  }
  dirty_ = false;
}

void H5mdOutput::resume(const SnapshotIndex& kept) {
  index_ = kept;
  published_ = kept.last_snapshot_step();
  commit();
  remove_unnamed_step_files(dir_, index_);
}

void H5mdOutput::drop_open_step() {
  steps_.drop();
  for (const std::int64_t step : steps_.take_dropped()) index_.drop_step(step);
}

}  // namespace tiersim
