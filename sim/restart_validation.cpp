#include "sim/restart_validation.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/error.hpp"

namespace tiersim {
namespace fs = std::filesystem;

// Keys a restart may change: how far the run goes and how often it writes what. Any other change
// would not continue the same run (time = step * dt against the checkpoint's clock, fp64 data
// under /parameters that say fp32, ...).
bool restart_may_change(const std::string& key) {
  static const char* const kKeys[] = {
      "run.steps",     "run.snapshot_every", "run.diagnostics_every", "run.checkpoint_every",
      "run.telemetry", "run.telemetry_every"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

// The shortest text that reads back as the same double.
std::string shortest_text(double v) {
  char b[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

// A key's value as text, to compare two cases and to name the values in a message.
std::string value_text(const Case& c, const KeySpec& k) {
  switch (k.type) {
    case KeySpec::Type::Int:
      return std::to_string(c.get_int(k.key));
    case KeySpec::Type::Float:
      return shortest_text(c.get_float(k.key));
    case KeySpec::Type::Bool:
      return c.get_bool(k.key) ? "true" : "false";
    default:
      return c.toml_text(k.key);  // quoted and escaped: never a raw control character
  }
}

// The case a restart continues with: the checkpoint's own, with overrides only of the keys a
// restart may change (an override that repeats the stored value is harmless and allowed).
Case restart_case(const std::string& dir, const Checkpoint& ckpt, const std::vector<std::string>& overrides) {
  const std::string source = (fs::path(dir) / "case.toml").string();
  const Case stored = Case::parse(ckpt.case_toml, source);
  Case c = Case::parse(ckpt.case_toml, source, overrides);
  for (const KeySpec& k : case_schema())
    if (!restart_may_change(k.key) && value_text(c, k) != value_text(stored, k))
      throw Error("--restart " + dir + ": " + k.key + " cannot change when a run continues (" + value_text(stored, k) +
                  " in its checkpoint, " + value_text(c, k) +
                  " asked); a restart takes only run.steps (--steps), run.snapshot_every, run.diagnostics_every, "
                  "run.checkpoint_every, run.telemetry and run.telemetry_every");
  return c;
}

// The checkpoint must be of the run that snapshots.h5 indexes (its /parameters hold the case the
// run started with): SnapshotFile::resume truncates that index and deletes step files, so a
// checkpoint copied from another run (another grid, a wave checkpoint in an N-body run) would
// destroy data or mix two runs. Model, precision and problem size are compared first (the likely
// mix-ups, named as such), then every other key but those a restart may change. The step proves
// nothing either way: a checkpoint lies ahead of the index's last snapshot when
// run.checkpoint_every falls between snapshots, and behind it when the run was killed between a
// snapshot and its checkpoint or checkpoints less often than it snapshots (resume drops the later
// snapshots); only a step past run.steps is wrong, and that is checked with the case.
void check_same_run(const std::string& dir, const Checkpoint& ckpt, const RunInfo& info) {
  const std::string ck = (fs::path(dir) / "checkpoint.h5").string(), h5 = (fs::path(dir) / "snapshots.h5").string();
  auto mismatch = [&](const std::string& what, const std::string& in_ckpt, const std::string& in_h5) {
    return Error(ck + ": not of the run in " + h5 + ": " + what + " " + in_ckpt + " in the checkpoint, " + in_h5 +
                 " in its /parameters; nothing was changed");
  };
  if (ckpt.model != info.model) throw mismatch("model", ckpt.model, info.model);
  const Case mine = Case::parse(ckpt.case_toml, ck), theirs = Case::parse(info.case_toml, h5 + " /parameters");
  static const char* const kFirst[] = {
      "run.model", "stencil.equation", "strategy.precision", "nbody.count", "grid.n", "grid.nx", "grid.ny", "grid.nz"};
  std::vector<const KeySpec*> order;
  for (const char* key : kFirst)
    for (const KeySpec& k : case_schema())
      if (k.key == key) order.push_back(&k);
  for (const KeySpec& k : case_schema())
    if (std::find(order.begin(), order.end(), &k) == order.end()) order.push_back(&k);
  for (const KeySpec* k : order)
    if (!restart_may_change(k->key) && value_text(mine, *k) != value_text(theirs, *k))
      throw mismatch(k->key + " =", value_text(mine, *k), value_text(theirs, *k));
}

}  // namespace tiersim
