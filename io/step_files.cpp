#include "io/step_files.hpp"

#include <filesystem>
#include <type_traits>
#include <vector>

#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"

namespace fs = std::filesystem;

namespace tiersim {

std::string StepFileWriter::path(std::int64_t step) const { return (fs::path(dir_) / step_file_name(step)).string(); }

hid_t StepFileWriter::open(std::int64_t step) {
  if (file_.get() >= 0 && step_ == step) return file_;
  close();
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
  file_ = Hdf5Handle(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), p, "cannot create " + tmp),
                     H5Fclose);
  step_ = step;
  guarded([&] { Hdf5Calls{p}.numeric_attr<std::int64_t>(file_, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {step}); });
  return file_;
}

void StepFileWriter::close() {
  if (step_ < 0) return;
  const std::string p = path(step_);
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
    publish(p + ".tmp", p);
  } catch (...) {
    drop();
    throw;
  }
  step_ = -1;
}

void StepFileWriter::drop() {
  if (step_ < 0) return;
  const std::int64_t step = step_;
  file_.close();  // may fail again; close_hdf5 remembers it
  H5Eclear2(H5E_DEFAULT);
  std::error_code ec;
  fs::remove(path(step) + ".tmp", ec);
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

void StepFileWriter::write_particles(std::int64_t step, const Bodies& b, bool double_precision, bool with_mass_and_id) {
  const hid_t sf = open(step);
  const hsize_t n = b.size();
  guarded([&] {
    const Hdf5Calls sh{path(step)};
    Hdf5Handle pg = sh.make_group(sf, "particles");
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
      // Time-independent: mass (run precision) and id (the body index), in the first step file.
      std::vector<std::int64_t> id(n);
      for (hsize_t i = 0; i < n; ++i) id[i] = std::int64_t(i);
      sh.write_fixed(pg, "mass", filetype, H5T_NATIVE_DOUBLE, {n}, b.mass.data());
      sh.write_fixed(pg, "id", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, id.data());
    }
  });
}

template <class T>
void StepFileWriter::write_field_data(std::int64_t step, const std::string& name, const GridGeometry& g,
                                      const T* data) {
  constexpr bool dp = std::is_same_v<T, double>;
  const hid_t sf = open(step);
  guarded([&] {
    const Hdf5Calls sh{path(step)};
    if (!sh.exists(sf, "/fields")) sh.make_group(sf, "fields");
    Hdf5Handle fg = sh.group(sf, "/fields");
    sh.write_fixed(fg, name, dp ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, dp ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
                   {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)}, data);
  });
}

void StepFileWriter::write_field(std::int64_t step, const std::string& name, const GridGeometry& g, const float* data) {
  write_field_data(step, name, g, data);
}
void StepFileWriter::write_field(std::int64_t step, const std::string& name, const GridGeometry& g,
                                 const double* data) {
  write_field_data(step, name, g, data);
}

}  // namespace tiersim
