#include "io/restart_pruning.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include "base/error.hpp"
#include "base/printable.hpp"
#include "io/safe_files.hpp"
#include "io/step_files.hpp"

namespace fs = std::filesystem;

namespace tiersim {

namespace {

const OwnedName kStepFile = OwnedName::with_step(kStepDir, "step_", ".h5");

// The step of a step file's name (step_<digits>.h5), or -1 (a .tmp, or not a step file).
std::int64_t step_of(const std::string& name) {
  if (!kStepFile.matches(name) || name.ends_with(".tmp")) return -1;
  const char* first = name.data() + 5;
  const char* last = name.data() + name.size() - 3;
  std::int64_t step = -1;
  const auto [p, ec] = std::from_chars(first, last, step);
  return ec == std::errc() && p == last ? step : -1;
}

bool same_info(const RunInfo& a, const RunInfo& b) {
  return a.case_toml == b.case_toml && a.case_source == b.case_source && a.strategy == b.strategy &&
         a.model == b.model && a.device == b.device && a.creator_version == b.creator_version;
}

void append_rows(ObservableRows& into, const ObservableRows& rows, const std::string& from) {
  for (const auto& [name, s] : rows) {
    ObservableSeries& t = into[name];
    for (std::size_t i = 0; i < s.step.size(); ++i) {
      if (!t.step.empty() && s.step[i] <= t.step.back())
        throw Error(from + ": observable " + printable(name) + ": step " + std::to_string(s.step[i]) +
                    " does not follow step " + std::to_string(t.step.back()));
      t.step.push_back(s.step[i]);
      t.time.push_back(s.time[i]);
      t.value.push_back(s.value[i]);
    }
  }
}

}  // namespace

SnapshotIndex rebuild_index(const std::string& dir, const RestartPoint& at) {
  const fs::path sd = fs::path(dir) / kStepDir;
  if (path_type(sd.string()) == PathType::Missing)
    throw Error(dir + ": not a tiersim run of this version (no " + kStepDir + "/)");
  require_real_directory(sd.string());
  if (at.last_snapshot_step < 0) throw Error(dir + ": the checkpoint names no snapshot to continue after");
  if (at.last_snapshot_step > at.step)
    throw Error(dir + ": the checkpoint names a last snapshot (step " + std::to_string(at.last_snapshot_step) +
                ") after its own step " + std::to_string(at.step));

  // The chain of snapshots, newest first, then in step order.
  std::vector<StepFileContents> chain;
  for (std::int64_t s = at.last_snapshot_step; s >= 0;) {
    // The parts of the state they name once they are known to be the run's (below).
    chain.push_back(read_step_file((fs::path(dir) / step_file_name(s)).string(), s, false));
    s = chain.back().previous_step;
  }
  std::reverse(chain.begin(), chain.end());

  // Every step file up to the checkpoint is one of the chain.
  std::set<std::int64_t> named;
  for (const auto& c : chain) named.insert(c.step);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sd, ec)) {
    const std::int64_t s = step_of(e.path().filename().string());
    if (s >= 0 && s <= at.step && !named.count(s))
      throw Error(e.path().string() + ": a step file up to the checkpoint (step " + std::to_string(at.step) +
                  ") that the run's snapshots do not name (of another run, or left there); not continuing");
  }
  if (ec) throw Error(sd.string() + ": cannot list: " + ec.message());

  SnapshotIndex ix;
  if (!chain.empty()) {
    ix.info = chain.back().info;
    ix.double_precision = chain.back().double_precision;
  }
  const std::string newest = chain.empty() ? "" : (fs::path(dir) / step_file_name(chain.back().step)).string();
  bool first_particles = true;
  for (const StepFileContents& c : chain) {
    const std::string path = (fs::path(dir) / step_file_name(c.step)).string();
    if (!same_info(c.info, ix.info) || c.double_precision != ix.double_precision)
      throw Error(path + ": of another run (its /parameters differ from those of " + newest + ")");
    if (c.particles) {
      if (first_particles && !c.mass_and_id)
        throw Error(path + ": the run's first particle snapshot holds no mass and id");
      if (!first_particles && c.n_particles != ix.n_particles)
        throw Error(path + ": " + std::to_string(c.n_particles) + " bodies, the run's other snapshots " +
                    std::to_string(ix.n_particles));
      first_particles = false;
      ix.n_particles = c.n_particles;
      ix.particle_rows.push_back({c.step, c.time, c.box_edge});
    }
    for (const StepFileContents::Field& f : c.fields) {
      SnapshotIndex::Field* have = ix.find_field(f.name);
      if (!have) {
        ix.fields.push_back({f.name, f.g, f.double_precision, {}});
        have = &ix.fields.back();
      }
      const GridGeometry& g = have->g;
      if (g.nx != f.g.nx || g.ny != f.g.ny || g.nz != f.g.nz || !std::equal(g.origin, g.origin + 3, f.g.origin) ||
          !std::equal(g.spacing, g.spacing + 3, f.g.spacing) || have->double_precision != f.double_precision)
        throw Error(path + ": field " + printable(f.name) + " on another grid or in another precision than before");
      have->rows.emplace_back(c.step, c.time);
    }
    append_rows(ix.observables, c.observables, path);
  }
  for (const StepFileContents& c : chain) require_step_file_parts((fs::path(dir) / step_file_name(c.step)).string());
  // The diagnostics after the last snapshot, which the checkpoint holds.
  for (const auto& [name, s] : at.observables_since_snapshot)
    for (const std::int64_t step : s.step)
      if (step <= at.last_snapshot_step || step > at.step)
        throw Error(dir + "/checkpoint.h5" + ": observable " + printable(name) + " at step " + std::to_string(step) +
                    ", not between its last snapshot and its own step");
  append_rows(ix.observables, at.observables_since_snapshot, dir + "/checkpoint.h5");
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
    if (!kStepFile.matches(name)) continue;
    if (!named.count(std::string(kStepDir) + "/" + name)) fs::remove(e.path(), ec);  // a link itself, not its target
  }
}

}  // namespace tiersim
