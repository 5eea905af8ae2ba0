#include "io/snapshot_readers.hpp"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>

#include "base/error.hpp"
#include "io/snapshot_index.hpp"

namespace fs = std::filesystem;

namespace tiersim {
namespace {

std::string h5_path_of(const std::string& dir_or_h5) {
  std::error_code ec;
  if (fs::is_directory(dir_or_h5, ec)) return (fs::path(dir_or_h5) / kIndexName).string();
  return dir_or_h5;
}

}  // namespace

RunInfo read_run_info(const std::string& dir_or_h5) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  const Hdf5Calls h5{path};
  require_tiersim_file(h5, f);
  Hdf5Handle p = h5.group(f, "/parameters");
  RunInfo info;
  info.case_toml = h5.read_string_dataset(p, "case");
  info.case_source = h5.read_string_dataset(p, "case_source");
  info.strategy = h5.read_string_dataset(p, "strategy");
  info.model = h5.read_string_dataset(p, "model");
  info.device = h5.read_string_dataset(p, "device");
  info.creator_version = h5.read_string_dataset(p, "creator_version");
  return info;
}

std::vector<std::int64_t> particle_steps(const std::string& dir_or_h5) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  const Hdf5Calls h5{path};
  if (!h5.exists(f, "/particles/all/position/step")) return {};
  Hdf5Handle st = h5.dataset(f, "/particles/all/position/step");
  return h5.read_all<std::int64_t>(st, "/particles/all/position/step", H5T_NATIVE_INT64);
}

namespace {
// A virtual dataset reads a missing source file as fill values; a reader says which file is gone.
void require_step_file(const std::string& h5_path, std::int64_t step) {
  const fs::path p = fs::path(h5_path).parent_path() / step_file_name(step);
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error(p.string() + ": missing (" + h5_path + " names it for step " + std::to_string(step) + ")");
}

hsize_t find_row(const std::string& file, const std::string& what, const std::vector<std::int64_t>& steps,
                 std::int64_t step) {
  if (steps.empty()) throw Error(file + ": no " + what + " snapshots");
  if (step < 0) return steps.size() - 1;
  const auto it = std::find(steps.begin(), steps.end(), step);
  if (it == steps.end()) throw Error(file + ": no " + what + " snapshot at step " + std::to_string(step));
  return hsize_t(it - steps.begin());
}
}  // namespace

ParticleSnapshot read_particles(const std::string& dir_or_h5, std::int64_t step) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  const Hdf5Calls h5{path};
  if (!h5.exists(f, "/particles/all/position/step")) throw Error(path + ": no particle snapshots");
  Hdf5Handle st = h5.dataset(f, "/particles/all/position/step"), tm = h5.dataset(f, "/particles/all/position/time");
  const auto steps = h5.read_all<std::int64_t>(st, "/particles/all/position/step", H5T_NATIVE_INT64);
  const auto times = h5.read_all<double>(tm, "/particles/all/position/time", H5T_NATIVE_DOUBLE);
  const hsize_t row = find_row(path, "particle", steps, step);
  require_step_file(path, steps[row]);
  require_step_file(path, steps.front());  // mass
  ParticleSnapshot s;
  s.step = steps[row];
  s.time = times.at(row);
  Hdf5Handle pos = h5.dataset(f, "/particles/all/position/value"), vel = h5.dataset(f, "/particles/all/velocity/value");
  const auto p = h5.read_row(pos, "/particles/all/position/value", row);
  const auto v = h5.read_row(vel, "/particles/all/velocity/value", row);
  Hdf5Handle mass = h5.dataset(f, "/particles/all/mass");
  const auto m = h5.read_all<double>(mass, "/particles/all/mass", H5T_NATIVE_DOUBLE);
  const std::size_t n = m.size();
  if (p.size() != 3 * n || v.size() != 3 * n) throw Error(path + ": particle arrays disagree on the number of bodies");
  s.bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.bodies.pos[i] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
    s.bodies.vel[i] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    s.bodies.acc[i] = {0, 0, 0};
    s.bodies.mass[i] = m[i];
  }
  return s;
}

FieldSnapshot read_field(const std::string& dir_or_h5, const std::string& name, std::int64_t step) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  const Hdf5Calls h5{path};
  const std::string g = "/fields/" + link_name(name, "field");
  if (!h5.exists(f, g)) throw Error(path + ": no field " + name);
  Hdf5Handle grp = h5.group(f, g);
  Hdf5Handle st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time"), val = h5.dataset(grp, "value");
  const auto steps = h5.read_all<std::int64_t>(st, g + "/step", H5T_NATIVE_INT64);
  const auto times = h5.read_all<double>(tm, g + "/time", H5T_NATIVE_DOUBLE);
  const hsize_t row = find_row(path, "field " + name, steps, step);
  require_step_file(path, steps[row]);
  FieldSnapshot s;
  s.step = steps[row];
  s.time = times.at(row);
  const auto d = h5.dims(val, g + "/value");
  if (d.size() != 4) throw Error(path + ": " + g + "/value is not value[T][nz][ny][nx]");
  s.geometry.nz = int(d[1]);
  s.geometry.ny = int(d[2]);
  s.geometry.nx = int(d[3]);
  const auto o = h5.read_double_attr(grp, "origin"), sp = h5.read_double_attr(grp, "spacing");
  if (o.size() != 3 || sp.size() != 3) throw Error(path + ": " + g + ": origin/spacing are not 3 values");
  std::copy(o.begin(), o.end(), s.geometry.origin);
  std::copy(sp.begin(), sp.end(), s.geometry.spacing);
  s.values = h5.read_row(val, g + "/value", row);
  return s;
}

}  // namespace tiersim
