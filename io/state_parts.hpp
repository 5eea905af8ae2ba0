// A state written in parts: each rank of a run writes its part of a step's state (a grid's slab of
// z planes, or a range of the bodies; one rank: all of it) into a file of its own,
// DIR/snapshots.d/part_<step>_r<rank>.h5, and rank 0 writes the files that stitch the parts into
// one dataset (HDF5 virtual datasets): the step file's /fields/<name>[nz][ny][nx] or
// /particles/<name>[N][3] and the checkpoint's /state/<name>. No rank holds more than its own part,
// the ranks write at once, and a step's snapshot and checkpoint share one copy of the state on the
// disk.
//   /state/<name>  the rank's values of the state array, in the run's precision, x fastest
//                  (Fletcher32 checksums on every chunk, as the checkpoint's arrays)
//   attributes     step, rank, first (where the part starts: the grid index of its first value,
//                  or its first body)
// A part is written under a .tmp name and renamed when complete; rank 0 publishes a file that
// names parts only once every part is in place, so a run killed at any moment leaves no step file
// or checkpoint that names a missing part.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "io/hdf5_library.hpp"
#include "io/output_format.hpp"

namespace tiersim {

// The part of `rank` of the state of `step`: the name relative to the run directory
// ("snapshots.d/part_000000000100_r000001.h5") and within snapshots.d/ (where the step files
// name it).
std::string state_part_name(std::int64_t step, int rank);
std::string state_part_file(std::int64_t step, int rank);
OwnedName state_part_owned_name();

// Writes this rank's part of `step` (first: the index of its first value in the whole arrays) and
// renames it into place; returns the file's bytes. On failure nothing is left but the error.
std::uint64_t write_state_part(const std::string& dir, std::int64_t step, int rank, std::int64_t first,
                               const std::vector<StatePartArray>& arrays);

// Waits until the parts of `step` of ranks 0..ranks-1 are in place (their writers are other
// processes: polls the directory). Throws Error when a rank's part went away unfinished (its
// write failed), when `timeout_s` seconds pass without a part appearing or growing, or once
// `abandon` is set.
void wait_for_state_parts(const std::string& dir, std::int64_t step, int ranks, const std::atomic<bool>& abandon,
                          double timeout_s);

// The slabs of a virtual dataset made of parts (Hdf5Calls::make_slab_view): rank r's part of
// `step`, dataset /state/<name>, over rows [first[r], first[r] + rows[r]) (none where rows[r] is
// 0). `from_step_dir`: the names as a step file (in snapshots.d/) gives them, else as the run
// directory's files do.
std::vector<Hdf5Calls::SlabPart> state_part_slabs(std::int64_t step, const std::string& name,
                                                  const std::vector<std::int64_t>& first,
                                                  const std::vector<std::int64_t>& rows, bool from_step_dir);

// Where `dset` of the file at `path` is a virtual dataset: every file it names (relative to the
// file's directory) is a regular file holding the named dataset with as many values as are mapped
// from it (a part is always mapped whole).
// Error naming the missing or damaged part otherwise (HDF5 itself reads a missing part as fill
// values). Returns the parts' file names (empty: not virtual).
std::vector<std::string> require_virtual_sources(hid_t dset, const std::string& path, const std::string& what);
// Whether `dset` (`what` of the file at `path`) is a virtual dataset, its sources unchecked.
bool is_virtual_dataset(hid_t dset, const std::string& path, const std::string& what);

// The steps of which DIR/snapshots.d/ holds parts (or their .tmp), and their removal; on a
// restart, the parts of every step but those kept (the kept step files' and the checkpoint's).
std::vector<std::int64_t> state_part_steps(const std::string& dir);
void remove_state_parts(const std::string& dir, std::int64_t step);
void remove_state_parts_but(const std::string& dir, const std::vector<std::int64_t>& keep);

}  // namespace tiersim
