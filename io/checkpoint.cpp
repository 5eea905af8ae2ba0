#include "io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_library.hpp"
#include "base/error.hpp"

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

// Elements per chunk of a state array: each chunk carries its own Fletcher32 checksum.
constexpr hsize_t kChunkElements = hsize_t(1) << 20;  // 8 MiB of doubles

void write_string_attr(hid_t obj, const char* name, const std::string& value, const std::string& path) {
  const std::string what = std::string("cannot write attribute ") + name;
  Hdf5Handle type(hdf5_check(H5Tcopy(H5T_C_S1), path, what), H5Tclose);
  hdf5_check_status(H5Tset_size(type, value.size() + 1), path, what);
  Hdf5Handle space(hdf5_check(H5Screate(H5S_SCALAR), path, what), H5Sclose);
  Hdf5Handle attr(hdf5_check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), path, what), H5Aclose);
  hdf5_check_status(H5Awrite(attr, type, value.c_str()), path, what);
}

std::string read_string_attr(hid_t obj, const char* name, const std::string& path) {
  const std::string what = std::string("cannot read attribute ") + name;
  Hdf5Handle attr(hdf5_check(H5Aopen(obj, name, H5P_DEFAULT), path, what), H5Aclose);
  Hdf5Handle type(hdf5_check(H5Aget_type(attr), path, what), H5Tclose);
  if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0)
    throw Error(path + ": attribute " + name + " is not a fixed-length string");
  std::string s(H5Tget_size(type), '\0');
  hdf5_check_status(H5Aread(attr, type, s.data()), path, what);
  return s.substr(0, s.find('\0'));
}

template <class T>
void write_scalar_attr(hid_t obj, const char* name, hid_t type, T v, const std::string& path) {
  const std::string what = std::string("cannot write attribute ") + name;
  Hdf5Handle space(hdf5_check(H5Screate(H5S_SCALAR), path, what), H5Sclose);
  Hdf5Handle attr(hdf5_check(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), path, what), H5Aclose);
  hdf5_check_status(H5Awrite(attr, type, &v), path, what);
}

template <class T>
T read_scalar_attr(hid_t attr, hid_t type, const std::string& path, const std::string& name) {
  Hdf5Handle space(hdf5_check(H5Aget_space(attr), path, "cannot read attribute " + name), H5Sclose);
  if (H5Sget_simple_extent_npoints(space) != 1) throw Error(path + ": attribute " + name + " is not one value");
  T v{};
  hdf5_check_status(H5Aread(attr, type, &v), path, "cannot read attribute " + name);
  return v;
}

template <class T>
T read_scalar_attr(hid_t obj, const char* name, hid_t type, const std::string& path) {
  Hdf5Handle attr(hdf5_check(H5Aopen(obj, name, H5P_DEFAULT), path, std::string("cannot read attribute ") + name), H5Aclose);
  return read_scalar_attr<T>(attr, type, path, name);
}

// A state array: chunked, each chunk with a Fletcher32 checksum, so a flipped byte fails the
// read instead of restarting from wrong data. (An empty array cannot be chunked; it has no data.)
void write_array(hid_t group, const std::string& name, const std::vector<double>& v, const std::string& path) {
  const std::string what = "cannot write array /state/" + name;
  const hsize_t n = v.size();
  Hdf5Handle space(hdf5_check(H5Screate_simple(1, &n, nullptr), path, what), H5Sclose);
  Hdf5Handle dcpl(hdf5_check(H5Pcreate(H5P_DATASET_CREATE), path, what), H5Pclose);
  if (n > 0) {
    const hsize_t chunk = std::min(n, kChunkElements);
    hdf5_check_status(H5Pset_chunk(dcpl, 1, &chunk), path, what);
    hdf5_check_status(H5Pset_fletcher32(dcpl), path, what);
  }
  Hdf5Handle d(hdf5_check(H5Dcreate2(group, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), path, what),
       H5Dclose);
  hdf5_check_status(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path, what);
  hdf5_check_status(d.close(), path, what);  // writes the chunks still cached
}

// Names of any length: H5Aget_name and H5Lget_name_by_idx are asked for the size first.
std::string attr_name(hid_t attr, const std::string& path) {
  const ssize_t len = H5Aget_name(attr, 0, nullptr);
  if (len < 0) hdf5_fail(path, "cannot read the attribute names of /state");
  std::string s(std::size_t(len) + 1, '\0');
  if (H5Aget_name(attr, s.size(), s.data()) < 0) hdf5_fail(path, "cannot read the attribute names of /state");
  s.resize(std::size_t(len));
  return s;
}
std::string link_name(hid_t group, hsize_t idx, const std::string& path) {
  const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, idx, nullptr, 0, H5P_DEFAULT);
  if (len < 0) hdf5_fail(path, "cannot read the array names of /state");
  std::string s(std::size_t(len) + 1, '\0');
  if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, idx, s.data(), s.size(), H5P_DEFAULT) < 0)
    hdf5_fail(path, "cannot read the array names of /state");
  s.resize(std::size_t(len));
  return s;
}

void write_into(hid_t file, const Checkpoint& c, const std::string& path) {
  Hdf5Handle root(hdf5_check(H5Gopen2(file, "/", H5P_DEFAULT), path, "cannot open /"), H5Gclose);
  write_string_attr(root, "model", c.model, path);
  write_string_attr(root, "case", c.case_toml, path);
  write_scalar_attr<std::int64_t>(root, "step", H5T_NATIVE_INT64, c.step, path);
  write_scalar_attr<double>(root, "time", H5T_NATIVE_DOUBLE, c.time, path);
  Hdf5Handle state(hdf5_check(H5Gcreate2(file, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path, "cannot create /state"),
           H5Gclose);
  for (const auto& [name, v] : c.state.scalars) write_scalar_attr<double>(state, name.c_str(), H5T_NATIVE_DOUBLE, v, path);
  for (const auto& [name, v] : c.state.arrays) write_array(state, name, v, path);
}

}  // namespace

void write_checkpoint(const std::string& dir, const Checkpoint& c) {
  const std::string final_path = (fs::path(dir) / "checkpoint.h5").string();
  const std::string tmp = final_path + ".tmp";
  silence_hdf5_errors();
  try {
    Hdf5Handle fapl(hdf5_check(H5Pcreate(H5P_FILE_ACCESS), final_path, "cannot create"), H5Pclose);
    // The 1.10 file format: its superblock, object headers and chunk indexes carry checksums too
    // (the default, 1.0-compatible format has none: a damaged chunk address read as zeros).
    hdf5_check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110), final_path, "cannot create");
    Hdf5Handle file(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), final_path, "cannot create " + tmp),
            H5Fclose);
    write_into(file, c, final_path);
    hdf5_check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), final_path, "cannot write");
    // The close is the file's last write: a checkpoint whose close failed is never renamed in.
    hdf5_check_status(file.close(), final_path, "cannot write");
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

// Every HDF5 call is checked: a damaged file is one line naming it and the object, never a
// restart from wrong data (checksums on the data and the metadata catch changed bytes; older
// checkpoints have none and read as before).
Checkpoint read_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": no such run directory");
  const std::string path = (fs::path(dir) / "checkpoint.h5").string();
  if (!fs::exists(path, ec)) throw Error(dir + ": not a tiersim run directory with a checkpoint (no checkpoint.h5)");
  const std::uintmax_t file_bytes = fs::file_size(path, ec);
  silence_hdf5_errors();
  Hdf5Handle file(hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "not a readable HDF5 checkpoint"), H5Fclose);
  Checkpoint c;
  Hdf5Handle root(hdf5_check(H5Gopen2(file, "/", H5P_DEFAULT), path, "cannot open /"), H5Gclose);
  c.model = read_string_attr(root, "model", path);
  c.case_toml = read_string_attr(root, "case", path);
  c.step = read_scalar_attr<std::int64_t>(root, "step", H5T_NATIVE_INT64, path);
  c.time = read_scalar_attr<double>(root, "time", H5T_NATIVE_DOUBLE, path);
  Hdf5Handle state(hdf5_check(H5Gopen2(file, "state", H5P_DEFAULT), path, "cannot open /state"), H5Gclose);
  H5O_info_t oinfo;
  hdf5_check_status(H5Oget_info2(state, &oinfo, H5O_INFO_NUM_ATTRS), path, "cannot read /state");
  for (hsize_t a = 0; a < oinfo.num_attrs; ++a) {
    Hdf5Handle attr(hdf5_check(H5Aopen_by_idx(state, ".", H5_INDEX_NAME, H5_ITER_INC, a, H5P_DEFAULT, H5P_DEFAULT), path,
                  "cannot read the attributes of /state"),
            H5Aclose);
    const std::string name = attr_name(attr, path);
    c.state.scalars.emplace_back(name, read_scalar_attr<double>(attr, H5T_NATIVE_DOUBLE, path, "/state/" + name));
  }
  H5G_info_t ginfo;
  hdf5_check_status(H5Gget_info(state, &ginfo), path, "cannot read /state");
  for (hsize_t k = 0; k < ginfo.nlinks; ++k) {
    const std::string name = link_name(state, k, path);
    const std::string what = "cannot read array /state/" + name;
    Hdf5Handle d(hdf5_check(H5Dopen2(state, name.c_str(), H5P_DEFAULT), path, what), H5Dclose);
    Hdf5Handle space(hdf5_check(H5Dget_space(d), path, what), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n < 0) hdf5_fail(path, what);
    // A damaged shape in a checkpoint without checksums: an error, not an allocation of petabytes.
    if (std::uintmax_t(n) > file_bytes / sizeof(double))
      throw Error(path + ": array /state/" + name + " claims " + std::to_string(n) + " values, more than the file holds");
    std::vector<double> v(static_cast<std::size_t>(n));
    if (n > 0) hdf5_check_status(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path, what);
    c.state.arrays.emplace_back(name, std::move(v));
  }
  return c;
}

}  // namespace tiersim
