#include "io/restart_pruning.hpp"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.hpp"
#include "io/safe_files.hpp"

namespace fs = std::filesystem;

namespace tiersim {
namespace {

// How many rows of an ascending step series a restart at step `keep` keeps.
hsize_t rows_through(const std::vector<std::int64_t>& steps, std::int64_t keep) {
  return hsize_t(std::upper_bound(steps.begin(), steps.end(), keep) - steps.begin());
}

// Reads the index, dropping rows with step > keep.
void reload(const Hdf5Calls& h5, hid_t file, std::int64_t keep, SnapshotIndex& ix) {
  {
    Hdf5Handle p = h5.group(file, "/parameters");
    ix.info.case_toml = h5.read_string_dataset(p, "case");
    ix.info.case_source = h5.read_string_dataset(p, "case_source");
    ix.info.strategy = h5.read_string_dataset(p, "strategy");
    ix.info.model = h5.read_string_dataset(p, "model");
    ix.info.device = h5.read_string_dataset(p, "device");
    ix.info.creator_version = h5.read_string_dataset(p, "creator_version");
    if (H5Aexists(p, "precision") > 0) ix.double_precision = h5.read_string_attr(p, "precision") == "fp64";
  }
  if (h5.exists(file, "/particles/all/position")) {
    Hdf5Handle pos = h5.group(file, "/particles/all/position");
    Hdf5Handle st = h5.dataset(pos, "step"), tm = h5.dataset(pos, "time"), val = h5.dataset(pos, "value");
    Hdf5Handle ed = h5.dataset(file, "/particles/all/box/edges/value");
    const auto steps = h5.read_all<std::int64_t>(st, "position/step", H5T_NATIVE_INT64);
    const auto times = h5.read_all<double>(tm, "position/time", H5T_NATIVE_DOUBLE);
    const auto edges = h5.read_all<double>(ed, "box/edges/value", H5T_NATIVE_DOUBLE);
    const auto d = h5.dims(val, "position/value");
    if (d.size() != 3 || times.size() != steps.size() || edges.size() != 3 * steps.size())
      throw Error(h5.file + ": /particles/all: malformed (value, step, time and box disagree)");
    ix.n_particles = d[1];
    const hsize_t kept = rows_through(steps, keep);
    for (hsize_t r = 0; r < kept; ++r) ix.particle_rows.push_back({steps[r], times[r], edges[3 * r]});
  }
  if (h5.exists(file, "/fields")) {
    Hdf5Handle fg = h5.group(file, "/fields");
    for (const std::string& name : link_names(fg)) {
      const std::string path = "/fields/" + name;
      Hdf5Handle grp = h5.group(file, path);
      Hdf5Handle st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time"), val = h5.dataset(grp, "value");
      const auto steps = h5.read_all<std::int64_t>(st, path + "/step", H5T_NATIVE_INT64);
      const auto times = h5.read_all<double>(tm, path + "/time", H5T_NATIVE_DOUBLE);
      SnapshotIndex::Field f;
      f.name = name;
      const auto origin = h5.read_double_attr(grp, "origin"), spacing = h5.read_double_attr(grp, "spacing");
      const auto d = h5.dims(val, path + "/value");
      if (origin.size() != 3 || spacing.size() != 3 || d.size() != 4 || times.size() != steps.size())
        throw Error(h5.file + ": " + path + ": malformed field");
      f.g.nz = int(d[1]);
      f.g.ny = int(d[2]);
      f.g.nx = int(d[3]);
      std::copy(origin.begin(), origin.end(), f.g.origin);
      std::copy(spacing.begin(), spacing.end(), f.g.spacing);
      Hdf5Handle t(hdf5_check(H5Dget_type(val), h5.file, "type of " + path), H5Tclose);
      f.double_precision = H5Tget_size(t) == 8;
      const hsize_t kept = rows_through(steps, keep);
      for (hsize_t r = 0; r < kept; ++r) f.rows.emplace_back(steps[r], times[r]);
      ix.fields.push_back(std::move(f));
    }
  }
  if (h5.exists(file, "/observables")) {
    Hdf5Handle og = h5.group(file, "/observables");
    for (const std::string& name : link_names(og)) {
      const std::string path = "/observables/" + name;
      Hdf5Handle grp = h5.group(file, path);
      Hdf5Handle val = h5.dataset(grp, "value"), st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time");
      SnapshotIndex::Series s;
      s.step = h5.read_all<std::int64_t>(st, path + "/step", H5T_NATIVE_INT64);
      s.time = h5.read_all<double>(tm, path + "/time", H5T_NATIVE_DOUBLE);
      s.value = h5.read_all<double>(val, path + "/value", H5T_NATIVE_DOUBLE);
      if (s.time.size() != s.step.size() || s.value.size() != s.step.size())
        throw Error(h5.file + ": " + path + ": value, step and time disagree");
      const hsize_t kept = rows_through(s.step, keep);
      s.step.resize(kept);
      s.time.resize(kept);
      s.value.resize(kept);
      ix.observables[name] = std::move(s);
    }
  }
  // Telemetry rows of steps after the kept snapshot are redone by the restarted run.
  if (h5.exists(file, "/telemetry")) {
    Hdf5Handle ds = h5.dataset(file, "/telemetry");
    Hdf5Handle ct = telemetry_type(h5.file);
    const std::vector<hsize_t> d = h5.dims(ds, "/telemetry");
    std::vector<TelemetryRow> rows(d.empty() ? 0 : d[0]);
    if (!rows.empty()) {
      hdf5_check_status(H5Dread(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), h5.file, "cannot read /telemetry");
      auto str = [](const char* s) { return std::string(s ? s : ""); };
      for (const TelemetryRow& r : rows)
        if (r.step <= keep)
          ix.telemetry.push_back({r.step, str(r.kernel), str(r.strategy), str(r.work_unit), r.ms, r.bytes_compulsory,
                                  r.bytes_modelled, r.flops, r.work, r.l2_window != 0, r.l2_window_bytes,
                                  r.l2_hit_ratio});
      Hdf5Handle sp(hdf5_check(H5Dget_space(ds), h5.file, "dataspace of /telemetry"), H5Sclose);
      H5Dvlen_reclaim(ct, sp, H5P_DEFAULT, rows.data());
    }
    ix.has_telemetry = true;
    ix.peak_source = H5Aexists(ds, "peak_source") > 0 ? h5.read_string_attr(ds, "peak_source") : "";
    const auto pk = H5Aexists(ds, "peak_gbs") > 0 ? h5.read_double_attr(ds, "peak_gbs") : std::vector<double>{};
    ix.peak_gbs = pk.empty() ? 0.0 : pk[0];
  }
}

}  // namespace

SnapshotIndex kept_snapshots(const std::string& dir, std::int64_t keep_through_step) {
  const std::string h5_path = (fs::path(dir) / kIndexName).string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": not a directory (cannot continue a run there)");
  switch (path_type(h5_path)) {
    case PathType::File:
      break;
    case PathType::Missing:
      throw Error(dir + ": not a tiersim run (no snapshots.h5)");
    case PathType::Link:
      throw Error(h5_path + ": is a symbolic link; a run's files are never links (not continuing it)");
    default:
      throw Error(h5_path + ": not a regular file (not continuing it)");
  }
  const std::string step_dir = (fs::path(dir) / kStepDir).string();
  if (path_type(step_dir) == PathType::Missing)
    throw Error(dir + ": not a tiersim run of this version (no " + kStepDir + "/ beside snapshots.h5)");
  // Its step files are read, and the unnamed ones removed: only in the run's own directory.
  require_real_directory(step_dir);
  SnapshotIndex ix;
  const Hdf5Calls h5{h5_path};
  Hdf5Handle f = open_for_reading(h5_path);
  require_tiersim_file(h5, f);
  reload(h5, f, keep_through_step, ix);
  return ix;
}

void remove_unnamed_step_files(const std::string& dir, const SnapshotIndex& index) {
  const std::vector<std::string> files = index.step_files();
  const std::set<std::string> named(files.begin(), files.end());
  const fs::path sd = fs::path(dir) / kStepDir;
  require_real_directory(sd.string());
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sd, ec)) {
    const std::string name = e.path().filename().string();
    // Only step files (and their .tmp): anything else in snapshots.d/ is not tiersim's to delete.
    if (!OwnedName::with_step(kStepDir, "step_", ".h5").matches(name)) continue;
    if (!named.count(std::string(kStepDir) + "/" + name)) fs::remove(e.path(), ec);  // a link itself, not its target
  }
}

}  // namespace tiersim
