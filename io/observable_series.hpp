// The observables a step file or a checkpoint carries beside the state: one group a series,
//   /observables/<name>/{step[T], time[T], value[T]}
// each array checksummed (Hdf5Calls::write_checked). snapshots.h5's index holds the same layout
// for the whole run, written plainly like the rest of the index, which is rewritten whole at every
// commit (io/snapshot_index.hpp).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>

#include "io/hdf5_library.hpp"
#include "io/output_format.hpp"

namespace tiersim {

// Writes `rows` into a new group /observables of `file`.
void write_observable_series(const Hdf5Calls& h5, hid_t file, const ObservableRows& rows);

// Reads the group /observables of `file` (which must exist), each array at most max_values long;
// errors name `path`. Each series' step, time and value must be as long as each other.
ObservableRows read_observable_series(const Hdf5Calls& h5, hid_t file, const std::string& path,
                                      std::uint64_t max_values);

}  // namespace tiersim
