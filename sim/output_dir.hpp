// The output directory of a run: its default name, what --force may replace, and its creation.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace tiersim {

// out/<case name>
std::string default_out_dir(const std::string& case_path);

// Whether `name` is something tiersim (or its render/plot scripts) writes into a run's directory.
bool is_tiersim_output(std::string name);

// Why --force may not replace the non-empty run directory `dir` ("" where it may): every entry a
// tiersim name and a snapshots.h5 that tiersim wrote.
std::string why_not_replaceable(const std::filesystem::path& dir);

// Creates the output directory `dir`. A non-empty one is an error unless `force`, and then it is
// emptied entry by entry only where why_not(dir) is "" (so `--out . --force` deletes nothing).
void prepare_out_dir(const std::string& dir, bool force,
                     const std::function<std::string(const std::filesystem::path&)>& why_not);

}  // namespace tiersim
