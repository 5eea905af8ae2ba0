#include "io/checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/hdf5_library.hpp"
#include "io/observable_series.hpp"
#include "io/safe_files.hpp"
#include "io/state_parts.hpp"
#include "base/error.hpp"

namespace tiersim {
namespace fs = std::filesystem;

void ModelState::widen() {
  for (auto& [name, v] : arrays_f32) arrays.emplace_back(std::move(name), HostArray<double>(v.begin(), v.end()));
  arrays_f32.clear();
  for (const Borrowed& b : borrowed) {
    if (b.fp64) {
      const double* d = static_cast<const double*>(b.data);
      arrays.emplace_back(b.name, HostArray<double>(d, d + b.count));
    } else {
      const float* f = static_cast<const float*>(b.data);
      arrays.emplace_back(b.name, HostArray<double>(f, f + b.count));
    }
  }
  borrowed.clear();
}

const HostArray<double>& ModelState::array(const std::string& name) const {
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

void write_into(hid_t file, const Checkpoint& c, const std::string& path, const std::string& tmp) {
  const Hdf5Calls h5{path, tmp};
  Hdf5Handle root = h5.group(file, "/");
  h5.string_attr(root, "model", c.model);
  h5.string_attr(root, "case", c.case_toml);
  h5.numeric_attr<std::int64_t>(root, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {c.step});
  h5.numeric_attr<double>(root, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {c.time});
  Hdf5Handle state = h5.make_group(file, "state");
  for (const auto& [name, v] : c.state.scalars)
    h5.numeric_attr<double>(state, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {v});
  // State arrays: each chunk with a Fletcher32 checksum, so a flipped byte fails the read.
  for (const auto& [name, v] : c.state.arrays) h5.write_checked(state, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v);
  for (const auto& [name, v] : c.state.arrays_f32) h5.write_checked(state, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, v);
  for (const ModelState::Borrowed& b : c.state.borrowed) {
    if (b.fp64)
      h5.write_checked(state, b.name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, static_cast<const double*>(b.data), b.count);
    else
      h5.write_checked(state, b.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, static_cast<const float*>(b.data), b.count);
  }
  for (const ModelState::InParts& p : c.state.in_parts) {
    std::int64_t n = 0;
    for (const std::int64_t k : p.count) n += k;
    h5.make_slab_view(state, p.name, p.fp64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, {hsize_t(n)},
                      state_part_slabs(p.step, p.name, p.first, p.count, false));
  }
  // The restart record.
  const RestartRecord& r = c.record;
  h5.numeric_attr<std::int64_t>(root, "last_snapshot_step", H5T_STD_I64LE, H5T_NATIVE_INT64, {r.last_snapshot_step});
  h5.numeric_attr<std::uint64_t>(root, "telemetry_bytes", H5T_STD_U64LE, H5T_NATIVE_UINT64, {r.telemetry_bytes});
  h5.numeric_attr<std::uint64_t>(root, "telemetry_fnv1a", H5T_STD_U64LE, H5T_NATIVE_UINT64, {r.telemetry_fnv1a});
  write_observable_series(h5, file, r.observables_since_snapshot);
}

}  // namespace

std::uint64_t write_checkpoint(const std::string& dir, const Checkpoint& c) {
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
    write_into(file, c, final_path, tmp);
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
  const std::uint64_t bytes = file_bytes(tmp);
  publish(tmp, final_path);
  return bytes;
}

// Every HDF5 call is checked: a damaged file is one line naming it and the object, never a
// restart from wrong data (checksums on the data and the metadata catch changed bytes; older
// checkpoints have none and read as before).
Checkpoint read_checkpoint(const std::string& dir, bool arrays) {
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
  for (const std::string& name : arrays ? link_names(state) : std::vector<std::string>{}) {
    // A damaged shape in a checkpoint without checksums: an error, not an allocation of petabytes.
    // fp32 arrays (4 bytes a value) are read as doubles too. An array in parts (a run on several
    // ranks): every part must be there, and they hold its values.
    std::uintmax_t holds = file_bytes;
    {
      Hdf5Handle d = h5.dataset(file, "/state/" + name);
      for (const std::string& part : require_virtual_sources(d, path, "/state/" + name))
        holds += fs::file_size(part, ec);
    }
    c.state.arrays.emplace_back(name, h5.read_array<double, NoInitAllocator<double>>(
                                          state, "/state/" + name, H5T_NATIVE_DOUBLE, holds / sizeof(float)));
  }
  // The restart record (none in a checkpoint of an older tiersim).
  RestartRecord& r = c.record;
  if (H5Aexists(root, "last_snapshot_step") > 0) {
    r.present = true;
    r.last_snapshot_step = h5.read_scalar_attr<std::int64_t>(root, "last_snapshot_step", H5T_NATIVE_INT64);
    r.telemetry_bytes = h5.read_scalar_attr<std::uint64_t>(root, "telemetry_bytes", H5T_NATIVE_UINT64);
    r.telemetry_fnv1a = h5.read_scalar_attr<std::uint64_t>(root, "telemetry_fnv1a", H5T_NATIVE_UINT64);
    r.observables_since_snapshot = read_observable_series(h5, file, path, file_bytes / sizeof(double));
  }
  return c;
}

}  // namespace tiersim
