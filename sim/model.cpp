#include "sim/model.hpp"

#include <cmath>
#include <cstdio>

#include "io/checkpoint.hpp"

namespace tiersim {

void Model::write_snapshot(SnapshotFile& out, std::int64_t step, double time) {
  const auto staged = stage_output(step, time, false);
  if (!staged) return;  // not rank 0: its part was gathered there
  staged->wait();
  staged->write_snapshot(out);
}

ModelState Model::save_state() {
  const auto staged = stage_output(0, 0.0, false);
  if (!staged) return {};  // not rank 0: its part was gathered there
  staged->wait();
  ModelState s = staged->state();
  s.widen();
  return s;
}
void Model::load_state(const ModelState&) { throw Error(name() + ": restarts are not supported for this model"); }
void Model::inject_nan(std::int64_t) { throw Error(name() + ": NaN injection is not supported for this model"); }

void Model::queue_observation() {
  queued_.values = observe();
  queued_.non_finite = find_non_finite();
}
Observation Model::take_observation() { return std::move(queued_); }

const HostArray<double>& checked_state_array(const ModelState& s, const std::string& name, std::size_t expected,
                                             const std::string& what) {
  for (const auto& [k, v] : s.arrays)
    if (k == name) {
      if (v.size() != expected)
        throw Error("array '" + name + "' holds " + std::to_string(v.size()) + " values; the case needs " +
                    std::to_string(expected) + " (" + what + ")");
      return v;
    }
  throw Error("no array '" + name + "' (the case needs " + std::to_string(expected) + " values: " + what + ")");
}

double checked_state_scalar(const ModelState& s, const std::string& name) {
  for (const auto& [k, v] : s.scalars)
    if (k == name) {
      if (!std::isfinite(v)) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", v);
        throw Error("value '" + name + "' is " + text);
      }
      return v;
    }
  throw Error("no value '" + name + "'");
}

}  // namespace tiersim
