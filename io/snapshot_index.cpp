#include "io/snapshot_index.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "base/error.hpp"
#include "io/safe_files.hpp"

namespace fs = std::filesystem;

namespace tiersim {

std::string step_file_name(std::int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s/step_%012lld.h5", kStepDir, static_cast<long long>(step));
  return buf;
}

std::string link_name(const std::string& s, const std::string& what) {
  if (s.empty() || s == "." || s == "..") throw Error(what + " name '" + s + "' is not usable as an HDF5 name");
  std::string out = s;
  for (char& c : out)
    if (c == '/') c = '_';
  return out;
}

SnapshotIndex::Field* SnapshotIndex::find_field(const std::string& name) {
  for (Field& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::int64_t SnapshotIndex::last_particle_step() const {
  return particle_rows.empty() ? -1 : particle_rows.back().step;
}

std::int64_t SnapshotIndex::last_snapshot_step() const {
  std::int64_t last = last_particle_step();
  for (const auto& f : fields)
    if (!f.rows.empty()) last = std::max(last, f.rows.back().first);
  return last;
}

std::vector<std::int64_t> SnapshotIndex::steps() const {
  std::set<std::int64_t> s;
  for (const ParticleRow& r : particle_rows) s.insert(r.step);
  for (const Field& f : fields)
    for (const auto& row : f.rows) s.insert(row.first);
  return {s.begin(), s.end()};
}

std::vector<std::string> SnapshotIndex::step_files() const {
  std::vector<std::string> out;
  for (const std::int64_t s : steps()) out.push_back(step_file_name(s));
  return out;
}

void SnapshotIndex::drop_step(std::int64_t step) {
  if (!particle_rows.empty() && particle_rows.back().step == step) particle_rows.pop_back();
  for (Field& f : fields)
    if (!f.rows.empty() && f.rows.back().first == step) f.rows.pop_back();
}

// The HDF5 compound type of TelemetryRow (its strings variable-length).
Hdf5Handle telemetry_type(const std::string& file) {
  Hdf5Handle str(hdf5_check(H5Tcopy(H5T_C_S1), file, "string type"), H5Tclose);
  hdf5_check_status(H5Tset_size(str, H5T_VARIABLE), file, "string type");
  Hdf5Handle ct(hdf5_check(H5Tcreate(H5T_COMPOUND, sizeof(TelemetryRow)), file, "compound type"), H5Tclose);
  auto ins = [&](const char* n, std::size_t off, hid_t ty) {
    hdf5_check_status(H5Tinsert(ct, n, off, ty), file, std::string("compound member ") + n);
  };
  ins("step", HOFFSET(TelemetryRow, step), H5T_NATIVE_INT64);
  ins("kernel", HOFFSET(TelemetryRow, kernel), str);
  ins("strategy", HOFFSET(TelemetryRow, strategy), str);
  ins("ms", HOFFSET(TelemetryRow, ms), H5T_NATIVE_DOUBLE);
  ins("bytes_compulsory", HOFFSET(TelemetryRow, bytes_compulsory), H5T_NATIVE_DOUBLE);
  ins("bytes_modelled", HOFFSET(TelemetryRow, bytes_modelled), H5T_NATIVE_DOUBLE);
  ins("flops", HOFFSET(TelemetryRow, flops), H5T_NATIVE_DOUBLE);
  ins("work", HOFFSET(TelemetryRow, work), H5T_NATIVE_DOUBLE);
  ins("work_unit", HOFFSET(TelemetryRow, work_unit), str);
  ins("l2_window", HOFFSET(TelemetryRow, l2_window), H5T_NATIVE_INT8);
  ins("l2_window_bytes", HOFFSET(TelemetryRow, l2_window_bytes), H5T_NATIVE_DOUBLE);
  ins("l2_hit_ratio", HOFFSET(TelemetryRow, l2_hit_ratio), H5T_NATIVE_DOUBLE);
  return ct;
}

void require_tiersim_file(const Hdf5Calls& h5, hid_t f) {
  if (!h5.exists(f, "/h5md/creator")) throw Error(h5.file + ": not a tiersim snapshot file (no /h5md/creator)");
  Hdf5Handle creator = h5.group(f, "/h5md/creator");
  if (H5Aexists(creator, "name") <= 0 || h5.read_string_attr(creator, "name") != kCreator)
    throw Error(h5.file + ": not a tiersim snapshot file (H5MD creator is not tiersim)");
}

namespace {

// The writing of one index file from a SnapshotIndex.
class IndexWriter {
  using Field = SnapshotIndex::Field;
  using TelemetryEntry = SnapshotIndex::TelemetryEntry;

 public:
  IndexWriter(const Hdf5Calls& h5, const SnapshotIndex& ix)
      : h5(h5),
        info(ix.info),
        double_precision(ix.double_precision),
        n_particles(ix.n_particles),
        particle_rows(ix.particle_rows),
        fields(ix.fields),
        observables(ix.observables),
        has_telemetry(ix.has_telemetry),
        telemetry(ix.telemetry),
        peak_source(ix.peak_source),
        peak_gbs(ix.peak_gbs) {}

  void write_index_into(hid_t file) const {
    // /h5md
    Hdf5Handle g = h5.make_group(file, "h5md");
    h5.numeric_attr<int>(g, "version", H5T_STD_I32LE, H5T_NATIVE_INT, {1, 1});
    {
      Hdf5Handle a = h5.make_group(g, "author");
      const char* user = std::getenv("USER");
      if (!user || !*user) user = std::getenv("LOGNAME");
      h5.string_attr(a, "name", user && *user ? user : "unknown");
    }
    {
      Hdf5Handle c = h5.make_group(g, "creator");
      h5.string_attr(c, "name", kCreator);
      h5.string_attr(c, "version", info.creator_version.empty() ? "unknown" : info.creator_version);
    }
    // /parameters
    {
      Hdf5Handle p = h5.make_group(file, "parameters");
      h5.string_dataset(p, "case", info.case_toml);
      h5.string_dataset(p, "case_source", info.case_source);
      h5.string_dataset(p, "strategy", info.strategy);
      h5.string_dataset(p, "model", info.model);
      h5.string_dataset(p, "device", info.device);
      h5.string_dataset(p, "creator_version", info.creator_version);
      h5.string_attr(p, "precision", double_precision ? "fp64" : "fp32");
    }
    if (!particle_rows.empty()) write_particles_index(file);
    if (!observables.empty()) {
      Hdf5Handle og = h5.make_group(file, "observables");
      for (const auto& [name, s] : observables) {
        Hdf5Handle grp = h5.make_group(og, name);
        const hsize_t t = s.step.size();
        h5.write_fixed(grp, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, s.value.data());
        h5.write_fixed(grp, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, s.step.data());
        h5.write_fixed(grp, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, s.time.data());
      }
    }
    bool any_field = false;
    for (const Field& f : fields) any_field = any_field || !f.rows.empty();
    if (any_field) {
      Hdf5Handle fg = h5.make_group(file, "fields");
      for (const Field& f : fields)
        if (!f.rows.empty()) write_field_index(fg, f);
    }
    if (has_telemetry) write_telemetry_index(file);
  }

  void write_particles_index(hid_t file) const {
    const hsize_t t = particle_rows.size(), n = n_particles;
    std::vector<std::int64_t> steps(t);
    std::vector<double> times(t), edges(3 * t);
    for (hsize_t r = 0; r < t; ++r) {
      steps[r] = particle_rows[r].step;
      times[r] = particle_rows[r].time;
      std::fill_n(&edges[3 * r], 3, particle_rows[r].box_edge);
    }
    Hdf5Handle lcpl(hdf5_check(H5Pcreate(H5P_LINK_CREATE), h5.file, "property list"), H5Pclose);
    hdf5_check_status(H5Pset_create_intermediate_group(lcpl, 1), h5.file, "property list");
    Hdf5Handle all(hdf5_check(H5Gcreate2(file, "/particles/all", lcpl, H5P_DEFAULT, H5P_DEFAULT), h5.file,
                              "cannot create group /particles/all"),
                   H5Gclose);
    {
      Hdf5Handle box = h5.make_group(all, "box");
      h5.numeric_attr<int>(box, "dimension", H5T_STD_I32LE, H5T_NATIVE_INT, {3});
      h5.string_array_attr(box, "boundary", {"none", "none", "none"});
      Hdf5Handle e = h5.make_group(box, "edges");
      h5.write_fixed(e, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t, 3}, edges.data());
    }
    for (const char* el : {"position", "velocity"}) {
      Hdf5Handle g = h5.make_group(all, el);
      std::vector<Hdf5Calls::ViewPart> parts;
      for (hsize_t r = 0; r < t; ++r)
        parts.push_back({step_file_name(steps[r]), std::string("/particles/") + el, static_cast<long long>(r)});
      h5.make_view(g, "value", ptype(), {t, n, 3}, parts);
    }
    {
      Hdf5Handle pos = h5.group(all, "position");
      h5.write_fixed(pos, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, steps.data());
      h5.write_fixed(pos, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, times.data());
    }
    // H5MD: elements sampled together share step and time (hard links).
    for (const char* el : {"/particles/all/velocity", "/particles/all/box/edges"})
      for (const char* st : {"step", "time"})
        hdf5_check_status(H5Lcreate_hard(file, (std::string("/particles/all/position/") + st).c_str(), file,
                                         (std::string(el) + "/" + st).c_str(), H5P_DEFAULT, H5P_DEFAULT),
                          h5.file, std::string("cannot link ") + el + "/" + st);
    // Time-independent: mass (run precision) and id (the index), kept in the first step file.
    const std::string first = step_file_name(steps.front());
    h5.make_view(all, "mass", ptype(), {n}, {{first, "/particles/mass"}});
    h5.make_view(all, "id", H5T_STD_I64LE, {n}, {{first, "/particles/id"}});
  }

  void write_field_index(hid_t fields_group, const Field& f) const {
    Hdf5Handle grp = h5.make_group(fields_group, f.name);
    const hsize_t t = f.rows.size();
    std::vector<std::int64_t> steps(t);
    std::vector<double> times(t);
    std::vector<Hdf5Calls::ViewPart> parts;
    for (hsize_t r = 0; r < t; ++r) {
      steps[r] = f.rows[r].first;
      times[r] = f.rows[r].second;
      parts.push_back({step_file_name(steps[r]), "/fields/" + f.name, static_cast<long long>(r)});
    }
    h5.make_view(grp, "value", f.double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                 {t, hsize_t(f.g.nz), hsize_t(f.g.ny), hsize_t(f.g.nx)}, parts);
    h5.write_fixed(grp, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, steps.data());
    h5.write_fixed(grp, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, times.data());
    const GridGeometry& g = f.g;
    h5.numeric_attr<double>(grp, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {g.origin[0], g.origin[1], g.origin[2]});
    h5.numeric_attr<double>(grp, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                            {g.spacing[0], g.spacing[1], g.spacing[2]});
    h5.numeric_attr<int>(grp, "shape", H5T_STD_I32LE, H5T_NATIVE_INT, {g.nx, g.ny, g.nz});
    h5.string_attr(grp, "layout", "value[T][nz][ny][nx], x fastest; origin, spacing, shape in x, y, z order");
  }

  void write_telemetry_index(hid_t file) const {
    Hdf5Handle ct = telemetry_type(h5.file);
    std::vector<TelemetryRow> rows;
    rows.reserve(telemetry.size());
    for (const TelemetryEntry& r : telemetry)
      rows.push_back({r.step, r.kernel.c_str(), r.strategy.c_str(), r.ms, r.bytes_compulsory, r.bytes_modelled, r.flops,
                      r.work, r.work_unit.c_str(), std::int8_t(r.l2_window ? 1 : 0), r.l2_window_bytes,
                      r.l2_hit_ratio});
    const hsize_t n = rows.size();
    Hdf5Handle sp(hdf5_check(H5Screate_simple(1, &n, nullptr), h5.file, "dataspace for /telemetry"), H5Sclose);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(file, "/telemetry", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), h5.file,
                             "cannot create dataset /telemetry"),
                  H5Dclose);
    if (n > 0)
      hdf5_check_status(H5Dwrite(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), h5.file,
                        "cannot write /telemetry");
    h5.string_attr(ds, "peak_source", peak_source);
    h5.numeric_attr<double>(ds, "peak_gbs", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {peak_gbs});
  }

 private:
  const Hdf5Calls& h5;
  const RunInfo& info;
  const bool double_precision;
  const std::uint64_t n_particles;
  const std::vector<SnapshotIndex::ParticleRow>& particle_rows;
  const std::vector<Field>& fields;
  const ObservableRows& observables;
  const bool has_telemetry;
  const std::vector<TelemetryEntry>& telemetry;
  const std::string& peak_source;
  const double peak_gbs;

  hid_t ptype() const { return double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE; }
};

}  // namespace

void write_snapshot_index(const std::string& h5_path, const SnapshotIndex& index) {
  const std::string tmp = fresh_temporary_name(h5_path);
  const Hdf5Calls h5{h5_path};
  try {
    Hdf5Handle fapl = file_access_plist(h5_path);
    // Exclusive: a link planted under the temporary name since is an error, never written through.
    Hdf5Handle f(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), h5_path, "cannot create " + tmp),
                 H5Fclose);
    IndexWriter(h5, index).write_index_into(f);
    hdf5_check_status(H5Fflush(f, H5F_SCOPE_LOCAL), h5_path, "cannot write");
    hdf5_check_status(f.close(), h5_path, "cannot write");  // its last write: never rename a file it failed
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  publish(tmp, h5_path);
}

}  // namespace tiersim
