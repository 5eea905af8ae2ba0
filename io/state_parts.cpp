#include "io/state_parts.hpp"

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/error.hpp"
#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"

namespace fs = std::filesystem;

namespace tiersim {

namespace {

const OwnedName kPart = OwnedName::with_step_and_rank(kStepDir, "part_", "_r", ".h5");

// Calls f(path, step) for every part in DIR/snapshots.d/ (and every part's .tmp).
template <class F>
void for_each_part(const std::string& dir, F&& f) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / kStepDir, ec)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".tmp")) name.resize(name.size() - 4);
    if (kPart.matches(name)) f(e.path(), std::int64_t(std::stoll(name.substr(5, name.find("_r") - 5))));
  }
}

}  // namespace

std::string state_part_file(std::int64_t step, int rank) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "part_%012lld_r%06d.h5", static_cast<long long>(step), rank);
  return buf;
}
std::string state_part_name(std::int64_t step, int rank) {
  return std::string(kStepDir) + "/" + state_part_file(step, rank);
}
OwnedName state_part_owned_name() { return kPart; }

std::uint64_t write_state_part(const std::string& dir, std::int64_t step, int rank, std::int64_t first,
                               const std::vector<StatePartArray>& arrays) {
  const std::string final_path = (fs::path(dir) / state_part_name(step, rank)).string();
  require_real_directory((fs::path(dir) / kStepDir).string());
  const std::string tmp = fresh_temporary_name(final_path);
  silence_hdf5_errors();
  try {
    Hdf5Handle fapl = file_access_plist(final_path);
    hdf5_check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110), final_path, "cannot create");
    Hdf5Handle file(
        hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), final_path, "cannot create " + tmp),
        H5Fclose);
    const Hdf5Calls h5{final_path, tmp};
    Hdf5Handle root = h5.group(file, "/");
    h5.numeric_attr<std::int64_t>(root, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {step});
    h5.numeric_attr<std::int64_t>(root, "rank", H5T_STD_I64LE, H5T_NATIVE_INT64, {rank});
    h5.numeric_attr<std::int64_t>(root, "first", H5T_STD_I64LE, H5T_NATIVE_INT64, {first});
    Hdf5Handle state = h5.make_group(file, "state");
    for (const StatePartArray& a : arrays) {
      if (a.fp64)
        h5.write_checked(state, a.name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, static_cast<const double*>(a.data), a.count);
      else
        h5.write_checked(state, a.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, static_cast<const float*>(a.data), a.count);
    }
    hdf5_check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), final_path, "cannot write");
    hdf5_check_status(file.close(), final_path, "cannot write");
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  const std::uint64_t bytes = file_bytes(tmp);
  publish(tmp, final_path);
  start_writeback(final_path);
  return bytes;
}

void wait_for_state_parts(const std::string& dir, std::int64_t step, int ranks, const std::atomic<bool>& abandon,
                          double timeout_s) {
  auto progress = std::chrono::steady_clock::now();  // when a part last appeared or grew
  std::vector<bool> done(std::size_t(ranks), false), started(std::size_t(ranks), false);
  std::vector<std::uint64_t> size(std::size_t(ranks), 0);  // of each part's .tmp: growing is progress
  for (int left = ranks;;) {
    for (int r = 0; r < ranks; ++r) {
      if (done[std::size_t(r)]) continue;
      const std::string p = (fs::path(dir) / state_part_name(step, r)).string();
      if (path_type(p) == PathType::File) {
        done[std::size_t(r)] = true, --left;
        progress = std::chrono::steady_clock::now();
      } else if (path_type(temporary_name(p)) == PathType::File) {
        const std::uint64_t now = file_bytes(temporary_name(p));
        if (!started[std::size_t(r)] || now != size[std::size_t(r)]) progress = std::chrono::steady_clock::now();
        started[std::size_t(r)] = true, size[std::size_t(r)] = now;
      } else if (started[std::size_t(r)]) {
        // Gone unfinished: the rank's write failed (its own line says why). The .tmp may also have
        // just been renamed: look once more.
        if (path_type(p) != PathType::File)
          throw Error(p + ": rank " + std::to_string(r) + " did not finish its part of step " + std::to_string(step));
      }
    }
    if (left == 0) return;
    if (abandon.load())
      throw Error("step " + std::to_string(step) + ": the run ended before every rank's part was written");
    const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - progress).count();
    if (idle > timeout_s)
      for (int r = 0; r < ranks; ++r)
        if (!done[std::size_t(r)])
          throw Error((fs::path(dir) / state_part_name(step, r)).string() + ": rank " + std::to_string(r) +
                      "'s part of step " + std::to_string(step) + " is not in place; no part appeared or grew for " +
                      std::to_string(int(timeout_s)) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<Hdf5Calls::SlabPart> state_part_slabs(std::int64_t step, const std::string& name,
                                                  const std::vector<std::int64_t>& first,
                                                  const std::vector<std::int64_t>& rows, bool from_step_dir) {
  std::vector<Hdf5Calls::SlabPart> v;
  for (std::size_t r = 0; r < first.size(); ++r)
    if (rows[r] > 0)  // a rank may hold no bodies: its part is not named
      v.push_back({from_step_dir ? state_part_file(step, int(r)) : state_part_name(step, int(r)), "/state/" + name,
                   hsize_t(first[r]), hsize_t(rows[r])});
  return v;
}

bool is_virtual_dataset(hid_t dset, const std::string& path, const std::string& what) {
  Hdf5Handle dcpl(hdf5_check(H5Dget_create_plist(dset), path, "creation properties of " + what), H5Pclose);
  return H5Pget_layout(dcpl) == H5D_VIRTUAL;
}

std::vector<std::string> require_virtual_sources(hid_t dset, const std::string& path, const std::string& what) {
  Hdf5Handle dcpl(hdf5_check(H5Dget_create_plist(dset), path, "creation properties of " + what), H5Pclose);
  if (H5Pget_layout(dcpl) != H5D_VIRTUAL) return {};
  std::size_t count = 0;
  hdf5_check_status(H5Pget_virtual_count(dcpl, &count), path, "virtual mappings of " + what);
  std::vector<std::string> files;
  const fs::path here = fs::path(path).parent_path();
  for (std::size_t i = 0; i < count; ++i) {
    char file[4096], name[1024];
    if (H5Pget_virtual_filename(dcpl, i, file, sizeof file) < 0 ||
        H5Pget_virtual_dsetname(dcpl, i, name, sizeof name) < 0)
      hdf5_fail(path, "virtual mapping of " + what);
    // The values mapped from the part: its selection in the virtual dataset (a part is mapped whole).
    Hdf5Handle vsel(hdf5_check(H5Pget_virtual_vspace(dcpl, i), path, "virtual mapping of " + what), H5Sclose);
    const hssize_t mapped = H5Sget_select_npoints(vsel);
    const std::string p = std::string(file) == "." ? path : (here / file).string();
    switch (path_type(p)) {
      case PathType::File:
        break;
      case PathType::Missing:
        throw Error(p + ": missing (" + path + " takes " + what + " from it)");
      case PathType::Link:
        throw Error(p + ": is a symbolic link; a run's files are never links");
      default:
        throw Error(p + ": not a regular file (" + path + " takes " + what + " from it)");
    }
    const Hdf5Calls s{p};
    Hdf5Handle f(hdf5_check(H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), p, "cannot open as HDF5"), H5Fclose);
    if (!s.exists(f, name)) throw Error(p + ": holds no " + name + " (" + path + " takes " + what + " from it)");
    Hdf5Handle d = s.dataset(f, name);
    hsize_t n = 1;
    for (const hsize_t x : s.dims(d, name)) n *= x;
    if (mapped < 0 || hsize_t(mapped) != n)
      throw Error(p + ": " + name + " holds " + std::to_string(n) + " values; " + path + " takes " +
                  std::to_string(mapped) + " from it");
    files.push_back(p);
  }
  return files;
}

std::vector<std::int64_t> state_part_steps(const std::string& dir) {
  std::vector<std::int64_t> steps;
  for_each_part(dir, [&](const fs::path&, std::int64_t s) { steps.push_back(s); });
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

void remove_state_parts_but(const std::string& dir, const std::vector<std::int64_t>& keep) {
  for (const std::int64_t s : state_part_steps(dir))
    if (std::find(keep.begin(), keep.end(), s) == keep.end()) remove_state_parts(dir, s);
}

void remove_state_parts(const std::string& dir, std::int64_t step) {
  for_each_part(dir, [&](const fs::path& p, std::int64_t s) {
    std::error_code ec;
    if (s == step) fs::remove(p, ec);  // a link itself, not its target
  });
}

}  // namespace tiersim
