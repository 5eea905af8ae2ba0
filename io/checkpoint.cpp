#include "io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_library.hpp"
#include "io/safe_files.hpp"
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

// A state array: chunked, each chunk with a Fletcher32 checksum, so a flipped byte fails the
// read instead of restarting from wrong data. (An empty array cannot be chunked; it has no data.)
void write_array(const Hdf5Calls& h5, hid_t group, const std::string& name, const std::vector<double>& v) {
  const std::string what = "cannot write array /state/" + name;
  const hsize_t n = v.size();
  Hdf5Handle space(hdf5_check(H5Screate_simple(1, &n, nullptr), h5.file, what), H5Sclose);
  Hdf5Handle dcpl(hdf5_check(H5Pcreate(H5P_DATASET_CREATE), h5.file, what), H5Pclose);
  if (n > 0) {
    const hsize_t chunk = std::min(n, kChunkElements);
    hdf5_check_status(H5Pset_chunk(dcpl, 1, &chunk), h5.file, what);
    hdf5_check_status(H5Pset_fletcher32(dcpl), h5.file, what);
  }
  Hdf5Handle d(
      hdf5_check(H5Dcreate2(group, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), h5.file, what),
      H5Dclose);
  hdf5_check_status(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), h5.file, what);
  hdf5_check_status(d.close(), h5.file, what);  // writes the chunks still cached
}

void write_into(hid_t file, const Checkpoint& c, const std::string& path) {
  const Hdf5Calls h5{path};
  Hdf5Handle root = h5.group(file, "/");
  h5.string_attr(root, "model", c.model);
  h5.string_attr(root, "case", c.case_toml);
  h5.numeric_attr<std::int64_t>(root, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {c.step});
  h5.numeric_attr<double>(root, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {c.time});
  Hdf5Handle state = h5.make_group(file, "state");
  for (const auto& [name, v] : c.state.scalars)
    h5.numeric_attr<double>(state, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {v});
  for (const auto& [name, v] : c.state.arrays) write_array(h5, state, name, v);
}

}  // namespace

void write_checkpoint(const std::string& dir, const Checkpoint& c) {
  const std::string final_path = (fs::path(dir) / kCheckpointName).string();
  const std::string tmp = fresh_temporary_name(final_path);
  silence_hdf5_errors();
  try {
    Hdf5Handle fapl(hdf5_check(H5Pcreate(H5P_FILE_ACCESS), final_path, "cannot create"), H5Pclose);
    // The 1.10 file format: its superblock, object headers and chunk indexes carry checksums too
    // (the default, 1.0-compatible format has none: a damaged chunk address read as zeros).
    hdf5_check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110), final_path, "cannot create");
    // Exclusive: a link planted under the temporary name is an error, never written through.
    Hdf5Handle file(
        hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), final_path, "cannot create " + tmp),
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
  sync_file(tmp);
  publish(tmp, final_path);
}

// Every HDF5 call is checked: a damaged file is one line naming it and the object, never a
// restart from wrong data (checksums on the data and the metadata catch changed bytes; older
// checkpoints have none and read as before).
Checkpoint read_checkpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": no such run directory");
  const std::string path = (fs::path(dir) / kCheckpointName).string();
  switch (path_type(path)) {
    case PathType::File:
      break;
    case PathType::Missing:
      throw Error(dir + ": not a tiersim run directory with a checkpoint (no checkpoint.h5)");
    case PathType::Link:
      throw Error(path + ": is a symbolic link; a run's files are never links (not continuing from it)");
    default:
      throw Error(path + ": not a regular file (not continuing from it)");
  }
  const std::uintmax_t file_bytes = fs::file_size(path, ec);
  silence_hdf5_errors();
  const Hdf5Calls h5{path};
  Hdf5Handle file(
      hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "not a readable HDF5 checkpoint"), H5Fclose);
  Checkpoint c;
  Hdf5Handle root = h5.group(file, "/");
  c.model = h5.read_string_attr(root, "model");
  c.case_toml = h5.read_string_attr(root, "case");
  c.step = h5.read_scalar_attr<std::int64_t>(root, "step", H5T_NATIVE_INT64);
  c.time = h5.read_scalar_attr<double>(root, "time", H5T_NATIVE_DOUBLE);
  Hdf5Handle state = h5.group(file, "state");
  for (const std::string& name : h5.attribute_names(state))
    c.state.scalars.emplace_back(name, h5.read_scalar_attr<double>(state, name, H5T_NATIVE_DOUBLE));
  for (const std::string& name : link_names(state)) {
    const std::string what = "cannot read array /state/" + name;
    Hdf5Handle d(hdf5_check(H5Dopen2(state, name.c_str(), H5P_DEFAULT), path, what), H5Dclose);
    Hdf5Handle space(hdf5_check(H5Dget_space(d), path, what), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n < 0) hdf5_fail(path, what);
    // A damaged shape in a checkpoint without checksums: an error, not an allocation of petabytes.
    if (std::uintmax_t(n) > file_bytes / sizeof(double))
      throw Error(path + ": array /state/" + name + " claims " + std::to_string(n) +
                  " values, more than the file holds");
    std::vector<double> v(static_cast<std::size_t>(n));
    if (n > 0) hdf5_check_status(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path, what);
    c.state.arrays.emplace_back(name, std::move(v));
  }
  return c;
}

}  // namespace tiersim
