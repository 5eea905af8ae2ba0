// Restart validation: which keys a restart may change, the case a restart continues with, and
// the check that a checkpoint belongs to the run it would continue (before anything in DIR changes).
#pragma once

#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/snapshots.hpp"
#include "sim/case.hpp"

namespace tiersim {

// Keys a restart may change: how far the run goes and how often it writes what.
bool restart_may_change(const std::string& key);

// The shortest text that reads back as the same double.
std::string shortest_text(double v);

// A key's value as text, to compare two cases and to name the values in a message.
std::string value_text(const Case& c, const KeySpec& k);

// The case a restart of DIR continues with: the checkpoint's own, with overrides only of the keys
// a restart may change (an override that repeats the stored value is harmless and allowed).
Case restart_case(const std::string& dir, const Checkpoint& ckpt, const std::vector<std::string>& overrides);

// Throws Error unless the checkpoint of DIR is of the run its snapshots.h5 indexes (`info`).
void check_same_run(const std::string& dir, const Checkpoint& ckpt, const RunInfo& info);

}  // namespace tiersim
