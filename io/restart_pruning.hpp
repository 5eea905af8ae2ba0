// What a restart keeps of a run's snapshots, and the removal of the rest.
//
// The restart never reads snapshots.h5 (nor snapshots.xmf, nor the .pvd files): they are derived,
// and rewritten. What it keeps is rebuilt from the step files, each checked (io/step_files.hpp),
// starting from the last snapshot the checkpoint names and following each file's previous_step to
// the run's first: every snapshot up to the checkpoint must be there and of the same run, and a
// step file up to the checkpoint that the chain does not name is refused. The observables computed
// after that last snapshot come from the checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "io/output_format.hpp"
#include "io/snapshot_index.hpp"

namespace tiersim {

// Where a restart continues from (from the checkpoint).
struct RestartPoint {
  std::int64_t step = 0;                 // the checkpoint's step: the snapshots through it are kept
  std::int64_t last_snapshot_step = -1;  // the newest step file kept
  ObservableRows observables_since_snapshot;
};

// The index of the run in DIR as far as `at`, rebuilt from its step files (read only: nothing in
// DIR changes). Throws Error naming the file that is missing, damaged or of another run. Telemetry
// rows are not in step files: the caller adds them.
SnapshotIndex rebuild_index(const std::string& dir, const RestartPoint& at);

// After a restart's index is in place: removes every step file it does not name (steps after the
// kept one, and .tmp files of a killed run); nothing else in snapshots.d/.
void remove_unnamed_step_files(const std::string& dir, const SnapshotIndex& index);

}  // namespace tiersim
