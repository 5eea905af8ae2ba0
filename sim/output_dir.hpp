// The output directory of a run: its default name, the files that belong to a run (what --force may
// delete), the lock that keeps a second process out, and the directory's creation.
#pragma once

#include <filesystem>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "io/output_format.hpp"

namespace tiersim {

// out/<case name>
std::string default_out_dir(const std::string& case_path);

// The lock file of a run directory: the mark that a directory is a tiersim run, and what a second
// process is refused on.
inline constexpr const char* kLockName = ".tiersim.lock";

// Every file tiersim writes into a run directory, and its scripts add there (scripts/render:
// frames/, scripts/plot telemetry: *.png), by exact name or step pattern, per subdirectory; each
// also as a killed write's .tmp.
const std::vector<OwnedName>& run_directory_names();

// Why --force may not replace the non-empty directory `dir` ("" where it may): anything in its tree
// that tiersim does not write (a file of another name, a link, a subdirectory of its own), or no
// .tiersim.lock (not a tiersim run). So `--out . --force` in a source tree deletes nothing.
std::string why_not_replaceable(const std::filesystem::path& dir);

// Deletes what why_not_replaceable() allowed: every file of run_directory_names() in `dir` and its
// subdirectories, and those subdirectories; the lock file stays (it is held).
void remove_run_files(const std::filesystem::path& dir);

// flock(2) on DIR/.tiersim.lock, held from before the first file of the directory is written or
// deleted until the object is destroyed. The kernel releases it when the process ends, however it
// ends: kill -9 leaves no stale lock.
class RunLock {
 public:
  RunLock() = default;
  // Takes the lock of the directory `dir`. create: make .tiersim.lock when missing (else a missing
  // one is an error). Throws Error "DIR: in use by another tiersim process (pid N); " + `refused`
  // when another process holds it.
  RunLock(const std::string& dir, bool create, const std::string& refused);
  RunLock(RunLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  RunLock& operator=(RunLock&& o) noexcept;
  ~RunLock();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// "in use by another tiersim process (pid N)" when another process holds the lock of `dir`, ""
// otherwise. Takes no lock and creates nothing.
std::string lock_holder(const std::string& dir);

// Claims the output directory `dir` for a new run and returns its lock: creates it (and parents)
// when missing. An existing non-empty one is refused unless `force`, and then replaced only where
// why_not(dir) is "": its files are deleted (remove(dir)) once the lock is held. A directory
// another process holds is refused in one line naming that process (never "use --force").
RunLock prepare_out_dir(const std::string& dir, bool force,
                        const std::function<std::string(const std::filesystem::path&)>& why_not,
                        const std::function<void(const std::filesystem::path&)>& remove);

}  // namespace tiersim
