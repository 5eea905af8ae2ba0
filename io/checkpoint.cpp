#include "io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "io/hdf5_library.hpp"
#include "sim/core.hpp"

namespace tiersim {
namespace fs = std::filesystem;

const std::vector<double>& ModelState::array(const std::string& name) const {
  for (const auto& [k, v] : arrays)
    if (k == name) return v;
  throw Error("checkpoint: no array '" + name + "'");
}

double ModelState::scalar(const std::string& name) const {
  for (const auto& [k, v] : scalars)
    if (k == name) return v;
  throw Error("checkpoint: no value '" + name + "'");
}

namespace {

// Owns one HDF5 identifier; close() reports whether the close (for a file, its last flush) worked.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { close(); }
  herr_t close() {
    const herr_t s = id_ >= 0 ? close_hdf5(id_, close_) : 0;
    id_ = -1;
    return s;
  }
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// Every message is one line: the checkpoint, what failed, and HDF5's (or the system's) reason.
[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what + ": " + hdf5_error_reason());
}
hid_t check(hid_t id, const std::string& path, const std::string& what) {
  if (id < 0) fail(path, what);
  return id;
}
void check_status(herr_t s, const std::string& path, const std::string& what) {
  if (s < 0) fail(path, what);
}

void write_string_attr(hid_t obj, const char* name, const std::string& value, const std::string& path) {
  const std::string what = std::string("cannot write attribute ") + name;
  Id type(check(H5Tcopy(H5T_C_S1), path, what), H5Tclose);
  check_status(H5Tset_size(type, value.size() + 1), path, what);
  Id space(check(H5Screate(H5S_SCALAR), path, what), H5Sclose);
  Id attr(check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), path, what), H5Aclose);
  check_status(H5Awrite(attr, type, value.c_str()), path, what);
}

std::string read_string_attr(hid_t obj, const char* name, const std::string& path) {
  Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (attr < 0) throw Error(path + ": missing attribute " + name);
  Id type(H5Aget_type(attr), H5Tclose);
  std::string s(H5Tget_size(type), '\0');
  if (H5Aread(attr, type, s.data()) < 0) throw Error(path + ": cannot read " + name);
  return s.substr(0, s.find('\0'));
}

template <class T>
void write_scalar_attr(hid_t obj, const char* name, hid_t type, T v, const std::string& path) {
  const std::string what = std::string("cannot write attribute ") + name;
  Id space(check(H5Screate(H5S_SCALAR), path, what), H5Sclose);
  Id attr(check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), path, what), H5Aclose);
  check_status(H5Awrite(attr, type, &v), path, what);
}

template <class T>
T read_scalar_attr(hid_t obj, const char* name, hid_t type, const std::string& path) {
  Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (attr < 0) throw Error(path + ": missing attribute " + name);
  T v{};
  if (H5Aread(attr, type, &v) < 0) throw Error(path + ": cannot read " + name);
  return v;
}

void write_array(hid_t group, const std::string& name, const std::vector<double>& v, const std::string& path) {
  const std::string what = "cannot write array /state/" + name;
  const hsize_t n = v.size();
  Id space(check(H5Screate_simple(1, &n, nullptr), path, what), H5Sclose);
  Id d(check(H5Dcreate2(group, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path, what),
       H5Dclose);
  check_status(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path, what);
  check_status(d.close(), path, what);
}

void write_into(hid_t file, const Checkpoint& c, const std::string& path) {
  Id root(check(H5Gopen2(file, "/", H5P_DEFAULT), path, "cannot open /"), H5Gclose);
  write_string_attr(root, "model", c.model, path);
  write_string_attr(root, "case", c.case_toml, path);
  write_scalar_attr<std::int64_t>(root, "step", H5T_NATIVE_INT64, c.step, path);
  write_scalar_attr<double>(root, "time", H5T_NATIVE_DOUBLE, c.time, path);
  Id state(check(H5Gcreate2(file, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path, "cannot create /state"),
           H5Gclose);
  for (const auto& [name, v] : c.state.scalars) write_scalar_attr<double>(state, name.c_str(), H5T_NATIVE_DOUBLE, v, path);
  for (const auto& [name, v] : c.state.arrays) write_array(state, name, v, path);
}

}  // namespace

void write_checkpoint(const std::string& dir, const Checkpoint& c) {
  const std::string final_path = (fs::path(dir) / "checkpoint.h5").string();
  const std::string tmp = final_path + ".tmp";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    Id file(check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), final_path, "cannot create " + tmp),
            H5Fclose);
    write_into(file, c, final_path);
    check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), final_path, "cannot write");
    // The close is the file's last write: a checkpoint whose close failed is never renamed in.
    check_status(file.close(), final_path, "cannot write");
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);  // on a full disk, the space back; the previous checkpoint stays
    throw;
  }
  // Make the data durable before the rename makes it the checkpoint.
  if (FILE* f = std::fopen(tmp.c_str(), "rb")) {
    fsync(fileno(f));
    std::fclose(f);
  }
  std::error_code ec;
  fs::rename(tmp, final_path, ec);
  if (ec) throw Error(final_path + ": cannot replace checkpoint: " + ec.message());
}

Checkpoint read_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": no such run directory");
  const std::string path = (fs::path(dir) / "checkpoint.h5").string();
  if (!fs::exists(path, ec)) throw Error(dir + ": not a tiersim run directory with a checkpoint (no checkpoint.h5)");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file < 0) throw Error(path + ": not a readable HDF5 checkpoint");
  Checkpoint c;
  Id root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
  c.model = read_string_attr(root, "model", path);
  c.case_toml = read_string_attr(root, "case", path);
  c.step = read_scalar_attr<std::int64_t>(root, "step", H5T_NATIVE_INT64, path);
  c.time = read_scalar_attr<double>(root, "time", H5T_NATIVE_DOUBLE, path);
  Id state(H5Gopen2(file, "state", H5P_DEFAULT), H5Gclose);
  if (state < 0) throw Error(path + ": no /state group");
  H5O_info_t oinfo;
  H5Oget_info2(state, &oinfo, H5O_INFO_NUM_ATTRS);
  for (hsize_t a = 0; a < oinfo.num_attrs; ++a) {
    Id attr(H5Aopen_by_idx(state, ".", H5_INDEX_NAME, H5_ITER_INC, a, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    char name[256];
    H5Aget_name(attr, sizeof name, name);
    double v = 0;
    H5Aread(attr, H5T_NATIVE_DOUBLE, &v);
    c.state.scalars.emplace_back(name, v);
  }
  H5G_info_t ginfo;
  H5Gget_info(state, &ginfo);
  for (hsize_t k = 0; k < ginfo.nlinks; ++k) {
    char name[256];
    H5Lget_name_by_idx(state, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT);
    Id d(H5Dopen2(state, name, H5P_DEFAULT), H5Dclose);
    Id space(H5Dget_space(d), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    std::vector<double> v(static_cast<std::size_t>(n));
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
      throw Error(path + ": cannot read checkpoint array " + name);
    c.state.arrays.emplace_back(name, std::move(v));
  }
  return c;
}

}  // namespace tiersim
