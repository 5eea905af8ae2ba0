#include "io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

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

struct Id {  // closes an HDF5 identifier
  hid_t id;
  herr_t (*close)(hid_t);
  ~Id() {
    if (id >= 0) close(id);
  }
};

void check(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw Error(path + ": " + what);
}

void write_string_attr(hid_t obj, const char* name, const std::string& value, const std::string& path) {
  Id type{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(type.id, value.size() + 1);
  Id space{H5Screate(H5S_SCALAR), H5Sclose};
  Id attr{H5Acreate2(obj, name, type.id, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  check(attr.id >= 0 && H5Awrite(attr.id, type.id, value.c_str()) >= 0, path, std::string("cannot write ") + name);
}

std::string read_string_attr(hid_t obj, const char* name, const std::string& path) {
  Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  check(attr.id >= 0, path, std::string("missing attribute ") + name);
  Id type{H5Aget_type(attr.id), H5Tclose};
  std::string s(H5Tget_size(type.id), '\0');
  check(H5Aread(attr.id, type.id, s.data()) >= 0, path, std::string("cannot read ") + name);
  return s.substr(0, s.find('\0'));
}

template <class T>
void write_scalar_attr(hid_t obj, const char* name, hid_t type, T v, const std::string& path) {
  Id space{H5Screate(H5S_SCALAR), H5Sclose};
  Id attr{H5Acreate2(obj, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  check(attr.id >= 0 && H5Awrite(attr.id, type, &v) >= 0, path, std::string("cannot write ") + name);
}

template <class T>
T read_scalar_attr(hid_t obj, const char* name, hid_t type, const std::string& path) {
  Id attr{H5Aopen(obj, name, H5P_DEFAULT), H5Aclose};
  check(attr.id >= 0, path, std::string("missing attribute ") + name);
  T v{};
  check(H5Aread(attr.id, type, &v) >= 0, path, std::string("cannot read ") + name);
  return v;
}

}  // namespace

void write_checkpoint(const std::string& dir, const Checkpoint& c) {
  const std::string final_path = (fs::path(dir) / "checkpoint.h5").string();
  const std::string tmp = final_path + ".tmp";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  {
    Id file{H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    check(file.id >= 0, tmp, "cannot create checkpoint file");
    Id root{H5Gopen2(file.id, "/", H5P_DEFAULT), H5Gclose};
    write_string_attr(root.id, "model", c.model, tmp);
    write_string_attr(root.id, "case", c.case_toml, tmp);
    write_scalar_attr<std::int64_t>(root.id, "step", H5T_NATIVE_INT64, c.step, tmp);
    write_scalar_attr<double>(root.id, "time", H5T_NATIVE_DOUBLE, c.time, tmp);
    Id state{H5Gcreate2(file.id, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
    for (const auto& [name, v] : c.state.scalars) write_scalar_attr<double>(state.id, name.c_str(), H5T_NATIVE_DOUBLE, v, tmp);
    for (const auto& [name, v] : c.state.arrays) {
      const hsize_t n = v.size();
      Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
      Id d{H5Dcreate2(state.id, name.c_str(), H5T_IEEE_F64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
      check(d.id >= 0 && H5Dwrite(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, tmp,
            "cannot write checkpoint array " + name + " (disk full?)");
    }
    check(H5Fflush(file.id, H5F_SCOPE_GLOBAL) >= 0, tmp, "cannot flush checkpoint (disk full?)");
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
  Id file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  check(file.id >= 0, path, "not a readable HDF5 checkpoint");
  Checkpoint c;
  Id root{H5Gopen2(file.id, "/", H5P_DEFAULT), H5Gclose};
  c.model = read_string_attr(root.id, "model", path);
  c.case_toml = read_string_attr(root.id, "case", path);
  c.step = read_scalar_attr<std::int64_t>(root.id, "step", H5T_NATIVE_INT64, path);
  c.time = read_scalar_attr<double>(root.id, "time", H5T_NATIVE_DOUBLE, path);
  Id state{H5Gopen2(file.id, "state", H5P_DEFAULT), H5Gclose};
  check(state.id >= 0, path, "no /state group");
  H5O_info_t oinfo;
  H5Oget_info2(state.id, &oinfo, H5O_INFO_NUM_ATTRS);
  for (hsize_t a = 0; a < oinfo.num_attrs; ++a) {
    Id attr{H5Aopen_by_idx(state.id, ".", H5_INDEX_NAME, H5_ITER_INC, a, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
    char name[256];
    H5Aget_name(attr.id, sizeof name, name);
    double v = 0;
    H5Aread(attr.id, H5T_NATIVE_DOUBLE, &v);
    c.state.scalars.emplace_back(name, v);
  }
  H5G_info_t ginfo;
  H5Gget_info(state.id, &ginfo);
  for (hsize_t k = 0; k < ginfo.nlinks; ++k) {
    char name[256];
    H5Lget_name_by_idx(state.id, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT);
    Id d{H5Dopen2(state.id, name, H5P_DEFAULT), H5Dclose};
    Id space{H5Dget_space(d.id), H5Sclose};
    const hssize_t n = H5Sget_simple_extent_npoints(space.id);
    std::vector<double> v(static_cast<std::size_t>(n));
    check(H5Dread(d.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0, path,
          std::string("cannot read checkpoint array ") + name);
    c.state.arrays.emplace_back(name, std::move(v));
  }
  return c;
}

}  // namespace tiersim
