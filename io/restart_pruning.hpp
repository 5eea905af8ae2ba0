// What a restart keeps of a run's snapshots, and the removal of the rest: the snapshots,
// observables and telemetry rows through the kept step, and the step files nothing names.
#pragma once

#include <cstdint>
#include <string>

#include "io/snapshot_index.hpp"

namespace tiersim {

// The index of the run in DIR with every row of a step after keep_through_step dropped. Throws
// Error if DIR is not a tiersim run.
SnapshotIndex kept_snapshots(const std::string& dir, std::int64_t keep_through_step);

// After a restart's index is in place: removes every step file it does not name (steps after the
// kept one, and .tmp files of a killed run).
void remove_unnamed_step_files(const std::string& dir, const SnapshotIndex& index);

}  // namespace tiersim
