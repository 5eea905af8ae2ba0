#include "io/step_files.hpp"

#include <cmath>
#include <filesystem>
#include <type_traits>
#include <vector>

#include "io/observable_series.hpp"
#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"
#include "io/state_parts.hpp"

namespace fs = std::filesystem;

namespace tiersim {

namespace {

// Time-independent, in the first step file with the masses: id, the body index.
void write_body_ids(const Hdf5Calls& sh, hid_t pg, hsize_t n) {
  std::vector<std::int64_t> id(n);
  for (hsize_t i = 0; i < n; ++i) id[i] = std::int64_t(i);
  sh.write_fixed(pg, "id", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, id.data());
}

constexpr const char* kParameterNames[] = {"case", "case_source", "strategy", "model", "device", "creator_version"};

// The member of RunInfo each /parameters attribute holds.
template <class Info>
auto& parameter(Info& info, const std::string& name) {
  if (name == "case") return info.case_toml;
  if (name == "case_source") return info.case_source;
  if (name == "strategy") return info.strategy;
  if (name == "model") return info.model;
  if (name == "device") return info.device;
  return info.creator_version;
}

}  // namespace

std::string StepFileWriter::path(std::int64_t step) const { return (fs::path(dir_) / step_file_name(step)).string(); }

hid_t StepFileWriter::open(std::int64_t step) {
  if (file_.get() >= 0 && step_ == step) return file_;
  if (step_ >= 0)
    throw Error(path(step) + ": step " + std::to_string(step) + " written while step " + std::to_string(step_) +
                " is open (commit a step before the next)");
  const std::string p = path(step);
  std::error_code ec;
  if (fs::exists(p, ec))
    throw Error(p + ": step " + std::to_string(step) +
                " is already complete (write every array of a step before the next commit)");
  // snapshots.d/ must still be the run's own directory, and the file is created exclusively: a link
  // under either name is refused, never written through.
  require_real_directory((fs::path(dir_) / kStepDir).string());
  const std::string tmp = fresh_temporary_name(p);
  Hdf5Handle fapl = file_access_plist(p);
  // The 1.10 format: checksums on the superblock and object headers (attributes included).
  hdf5_check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110), p, "cannot create");
  file_ = Hdf5Handle(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), p, "cannot create " + tmp),
                     H5Fclose);
  step_ = step;
  guarded([&] { Hdf5Calls{p}.numeric_attr<std::int64_t>(file_, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {step}); });
  return file_;
}

void StepFileWriter::close(const StepFileRecord& record) {
  if (step_ < 0) return;
  const std::string p = path(step_);
  guarded([&] {
    const Hdf5Calls h5{p};
    h5.numeric_attr<double>(file_, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {record.time});
    h5.numeric_attr<std::int64_t>(file_, "previous_step", H5T_STD_I64LE, H5T_NATIVE_INT64, {record.previous_step});
    Hdf5Handle params = h5.make_group(file_, "parameters");
    if (record.info)
      for (const char* name : kParameterNames) h5.string_attr(params, name, parameter(*record.info, name));
    h5.string_attr(params, "precision", record.double_precision ? "fp64" : "fp32");
    if (!record.observables.empty()) write_observable_series(h5, file_, record.observables);
  });
  // The flush says why (the close's own flush would fail the same way); the file is closed
  // either way, since one left open would be closed again at exit.
  const herr_t flushed = H5Fflush(file_, H5F_SCOPE_LOCAL);
  std::string why = flushed < 0 ? hdf5_error_reason() : "";
  if (file_.close() < 0 && why.empty()) why = hdf5_error_reason();
  if (!why.empty()) {
    drop();
    throw Error(p + ": cannot write: " + why);
  }
  try {
    publish(temporary_name(p), p);
  } catch (...) {
    drop();
    throw;
  }
  start_writeback(p);
  step_ = -1;
}

void StepFileWriter::drop() {
  if (step_ < 0) return;
  const std::int64_t step = step_;
  file_.close();  // may fail again; close_hdf5 remembers it
  H5Eclear2(H5E_DEFAULT);
  std::error_code ec;
  fs::remove(temporary_name(path(step)), ec);
  step_ = -1;
  dropped_.push_back(step);
}

template <class F>
void StepFileWriter::guarded(F&& f) {
  try {
    f();
  } catch (...) {
    drop();
    throw;
  }
}

void StepFileWriter::write_particles(std::int64_t step, const Bodies& b, bool double_precision, bool with_mass_and_id,
                                     double box_edge) {
  const hid_t sf = open(step);
  const hsize_t n = b.size();
  guarded([&] {
    const Hdf5Calls sh{path(step)};
    Hdf5Handle pg = sh.make_group(sf, "particles");
    sh.numeric_attr<double>(pg, "box_edge", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {box_edge});
    const hid_t filetype = double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    const hid_t memtype = double_precision ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    auto write_vec = [&](const char* el, const std::vector<Vec3<double>>& v) {
      std::vector<double> d(3 * n);
      for (hsize_t i = 0; i < n; ++i) {
        d[3 * i] = v[i].x;
        d[3 * i + 1] = v[i].y;
        d[3 * i + 2] = v[i].z;
      }
      if (double_precision) return sh.write_fixed(pg, el, filetype, memtype, {n, 3}, d.data());
      const std::vector<float> f(d.begin(), d.end());
      sh.write_fixed(pg, el, filetype, memtype, {n, 3}, f.data());
    };
    write_vec("position", b.pos);
    write_vec("velocity", b.vel);
    if (with_mass_and_id) {
      sh.write_fixed(pg, "mass", filetype, H5T_NATIVE_DOUBLE, {n}, b.mass.data());
      write_body_ids(sh, pg, n);
    }
  });
}

void StepFileWriter::write_particles_parts(std::int64_t step, std::uint64_t n, bool double_precision,
                                           bool with_mass_and_id, double box_edge,
                                           const std::array<std::vector<Hdf5Calls::SlabPart>, 3>& slabs) {
  const hid_t sf = open(step);
  guarded([&] {
    const Hdf5Calls sh{path(step)};
    Hdf5Handle pg = sh.make_group(sf, "particles");
    sh.numeric_attr<double>(pg, "box_edge", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {box_edge});
    const hid_t filetype = double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    sh.make_slab_view(pg, "position", filetype, {n, 3}, slabs[0]);
    sh.make_slab_view(pg, "velocity", filetype, {n, 3}, slabs[1]);
    if (with_mass_and_id) {
      sh.make_slab_view(pg, "mass", filetype, {n}, slabs[2]);
      write_body_ids(sh, pg, n);
    }
  });
}

template <class T>
void StepFileWriter::write_field_data(std::int64_t step, const std::string& name, const GridGeometry& g,
                                      const T* data) {
  constexpr bool dp = std::is_same_v<T, double>;
  const hid_t sf = open(step);
  guarded([&] {
    const Hdf5Calls sh{path(step), temporary_name(path(step))};
    if (!sh.exists(sf, "/fields")) sh.make_group(sf, "fields");
    Hdf5Handle fg = sh.group(sf, "/fields");
    sh.write_fixed(fg, name, dp ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, dp ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
                   {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)}, data);
    Hdf5Handle d = sh.dataset(fg, name);
    sh.numeric_attr<double>(d, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {g.origin[0], g.origin[1], g.origin[2]});
    sh.numeric_attr<double>(d, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                            {g.spacing[0], g.spacing[1], g.spacing[2]});
  });
}

void StepFileWriter::write_field_parts(std::int64_t step, const std::string& name, const GridGeometry& g,
                                       bool double_precision, const std::vector<Hdf5Calls::SlabPart>& parts) {
  const hid_t sf = open(step);
  guarded([&] {
    const Hdf5Calls sh{path(step)};
    if (!sh.exists(sf, "/fields")) sh.make_group(sf, "fields");
    Hdf5Handle fg = sh.group(sf, "/fields");
    sh.make_slab_view(fg, name, double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                      {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)}, parts);
    Hdf5Handle d = sh.dataset(fg, name);
    sh.numeric_attr<double>(d, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {g.origin[0], g.origin[1], g.origin[2]});
    sh.numeric_attr<double>(d, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                            {g.spacing[0], g.spacing[1], g.spacing[2]});
  });
}

void StepFileWriter::write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const float* data) {
  write_field_data(step, name, g, data);
}
void StepFileWriter::write_field(std::int64_t step, const std::string& name, const GridGeometry& g,
                                 const double* data) {
  write_field_data(step, name, g, data);
}

// ---- Reading one back ----------------------------------------------------------------------------

namespace {

// The floating-point size (4 or 8) of a dataset, Error otherwise.
int float_bytes(const Hdf5Calls& h5, hid_t d, const std::string& name) {
  Hdf5Handle t(hdf5_check(H5Dget_type(d), h5.file, "type of " + name), H5Tclose);
  const std::size_t size = H5Tget_size(t);
  if (H5Tget_class(t) != H5T_FLOAT || (size != 4 && size != 8))
    throw Error(h5.file + ": " + name + " is not float32 or float64");
  return int(size);
}

double finite_scalar(const Hdf5Calls& h5, hid_t obj, const std::string& name) {
  const double v = h5.read_scalar_attr<double>(obj, name, H5T_NATIVE_DOUBLE);
  if (!std::isfinite(v)) throw Error(h5.file + ": attribute " + name + " is not finite");
  return v;
}

std::vector<double> finite_triple(const Hdf5Calls& h5, hid_t obj, const std::string& name, const std::string& where) {
  const std::vector<double> v = h5.read_double_attr(obj, name);
  if (v.size() != 3 || !std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]))
    throw Error(h5.file + ": " + where + " attribute " + name + " is not 3 finite values");
  return v;
}

}  // namespace

void require_step_file_parts(const std::string& path) {
  silence_hdf5_errors();
  const Hdf5Calls h5{path};
  Hdf5Handle fapl = file_access_plist(path);
  Hdf5Handle f(hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), path, "cannot open as HDF5"), H5Fclose);
  for (const char* group : {"/particles", "/fields"}) {
    if (!h5.exists(f, group)) continue;
    Hdf5Handle g = h5.group(f, group);
    for (const std::string& name : link_names(g)) {
      Hdf5Handle d = h5.dataset(g, name);
      require_virtual_sources(d, path, std::string(group) + "/" + name);
    }
  }
}

StepFileContents read_step_file(const std::string& path, std::int64_t step, bool parts) {
  switch (path_type(path)) {
    case PathType::File:
      break;
    case PathType::Missing:
      throw Error(path + ": missing (the run's snapshot of step " + std::to_string(step) + ")");
    case PathType::Link:
      throw Error(path + ": is a symbolic link; a run's files are never links");
    default:
      throw Error(path + ": not a regular file");
  }
  std::error_code ec;
  const std::uint64_t file_bytes = fs::file_size(path, ec);
  silence_hdf5_errors();
  const Hdf5Calls h5{path};
  Hdf5Handle fapl = file_access_plist(path);
  Hdf5Handle f(hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), path, "cannot open as HDF5"), H5Fclose);
  StepFileContents c;
  c.step = h5.read_scalar_attr<std::int64_t>(f, "step", H5T_NATIVE_INT64);
  if (c.step != step) throw Error(path + ": holds step " + std::to_string(c.step) + ", not " + std::to_string(step));
  if (H5Aexists(f, "previous_step") <= 0 || H5Aexists(f, "time") <= 0 || !h5.exists(f, "/parameters"))
    throw Error(path + ": no record of its run (written by an older tiersim, or damaged)");
  c.previous_step = h5.read_scalar_attr<std::int64_t>(f, "previous_step", H5T_NATIVE_INT64);
  if (c.previous_step >= step || c.previous_step < -1)
    throw Error(path + ": names step " + std::to_string(c.previous_step) + " as the snapshot before step " +
                std::to_string(step));
  c.time = finite_scalar(h5, f, "time");
  {
    Hdf5Handle p = h5.group(f, "/parameters");
    for (const char* name : kParameterNames) parameter(c.info, name) = h5.read_string_attr(p, name);
    const std::string precision = h5.read_string_attr(p, "precision");
    if (precision != "fp32" && precision != "fp64")
      throw Error(path + ": /parameters precision is neither fp32 nor fp64");
    c.double_precision = precision == "fp64";
  }
  if (h5.exists(f, "/particles")) {
    Hdf5Handle pg = h5.group(f, "/particles");
    c.particles = true;
    c.box_edge = finite_scalar(h5, pg, "box_edge");
    for (const char* el : {"position", "velocity"}) {
      Hdf5Handle d = h5.dataset(pg, el);
      if (parts) require_virtual_sources(d, path, std::string("/particles/") + el);
      const auto dims = h5.dims(d, std::string("/particles/") + el);
      if (dims.size() != 2 || dims[1] != 3 || dims[0] == 0 || (c.n_particles && dims[0] != c.n_particles))
        throw Error(path + ": /particles/" + el + " is not [N][3] like the other particle arrays");
      c.n_particles = dims[0];
      if ((float_bytes(h5, d, std::string("/particles/") + el) == 8) != c.double_precision)
        throw Error(path + ": /particles/" + el + " is not in the run's precision");
    }
    const bool mass = h5.exists(pg, "mass"), id = h5.exists(pg, "id");
    if (mass != id) throw Error(path + ": /particles holds one of mass and id without the other");
    c.mass_and_id = mass;
    for (const char* el : {"mass", "id"}) {
      if (!mass) break;
      Hdf5Handle d = h5.dataset(pg, el);
      if (parts) require_virtual_sources(d, path, std::string("/particles/") + el);
      const auto dims = h5.dims(d, std::string("/particles/") + el);
      if (dims.size() != 1 || dims[0] != c.n_particles) throw Error(path + ": /particles/" + el + " is not [N]");
    }
  }
  if (h5.exists(f, "/fields")) {
    Hdf5Handle fg = h5.group(f, "/fields");
    for (const std::string& name : link_names(fg)) {
      const std::string where = "/fields/" + name;
      Hdf5Handle d = h5.dataset(fg, name);
      const auto dims = h5.dims(d, where);
      // A field in parts is held by the parts (checked here with `parts`), not by this file.
      const bool in_parts =
          parts ? !require_virtual_sources(d, path, where).empty() : is_virtual_dataset(d, path, where);
      if (dims.size() != 3 || dims[0] == 0 || dims[1] == 0 || dims[2] == 0 ||
          (!in_parts && dims[0] * dims[1] * dims[2] > file_bytes))
        throw Error(path + ": " + where + " is not a [nz][ny][nx] grid the file can hold");
      StepFileContents::Field field;
      field.name = name;
      field.g.nz = int(dims[0]);
      field.g.ny = int(dims[1]);
      field.g.nx = int(dims[2]);
      field.double_precision = float_bytes(h5, d, where) == 8;
      const auto o = finite_triple(h5, d, "origin", where), s = finite_triple(h5, d, "spacing", where);
      std::copy(o.begin(), o.end(), field.g.origin);
      std::copy(s.begin(), s.end(), field.g.spacing);
      c.fields.push_back(std::move(field));
    }
  }
  if (!c.particles && c.fields.empty()) throw Error(path + ": holds neither particles nor fields");
  if (h5.exists(f, "/observables")) {
    c.observables = read_observable_series(h5, f, path, file_bytes / sizeof(double));
    for (const auto& [name, s] : c.observables)
      for (std::size_t i = 0; i < s.step.size(); ++i)
        if (s.step[i] <= (i ? s.step[i - 1] : c.previous_step) || s.step[i] > step)
          throw Error(path + ": /observables/" + name + ": step " + std::to_string(s.step[i]) +
                      " is not after the one before it and at most " + std::to_string(step));
  }
  return c;
}

}  // namespace tiersim
