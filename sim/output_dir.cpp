#include "sim/output_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/error.hpp"
#include "base/printable.hpp"
#include "io/checkpoint.hpp"
#include "io/safe_files.hpp"

namespace tiersim {
namespace fs = std::filesystem;

namespace {

// The names in `dir` (without . and ..), in name order; links are not followed.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw Error(dir.string() + ": cannot list: " + std::strerror(errno));
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::set<std::string> owned_subdirs() {
  std::set<std::string> s;
  for (const OwnedName& n : run_directory_names())
    if (!n.subdir.empty()) s.insert(n.subdir);
  return s;
}

bool owned(const std::string& subdir, const std::string& name) {
  for (const OwnedName& n : run_directory_names())
    if (n.subdir == subdir && n.matches(name)) return true;
  return false;
}

const char* kind(PathType e) {
  switch (e) {
    case PathType::Link:
      return "a symbolic link";
    case PathType::Directory:
      return "a directory";
    case PathType::Other:
      return "not a regular file";
    default:
      return "a file";
  }
}

}  // namespace

std::string default_out_dir(const std::string& case_path) {
  return (fs::path("out") / fs::path(case_path).stem()).string();
}

const std::vector<OwnedName>& run_directory_names() {
  static const std::vector<OwnedName> names = [] {
    std::vector<OwnedName> n = output_format_names();  // snapshots.h5, snapshots.xmf, snapshots.d/, VTK
    for (const char* f : {kLockName, kCheckpointName, "case.toml", "telemetry.csv", "summary.json", "counters.csv"})
      n.push_back(OwnedName::exact("", f));
    // scripts/plot telemetry, beside telemetry.csv.
    for (const char* f : {"bandwidth.png", "roofline.png"}) n.push_back(OwnedName::exact("", f));
    // scripts/render: frames/<what>_<frame>.png and <what>.mp4, for the particles and each field
    // a model writes (u: heat and wave; U and V: Gray-Scott).
    for (const std::string what : {"particles", "u", "U", "V"}) {
      n.push_back(OwnedName::with_step("frames", what + "_", ".png"));
      n.push_back(OwnedName::exact("frames", what + ".mp4"));
    }
    return n;
  }();
  return names;
}

std::string why_not_replaceable(const fs::path& dir) {
  const std::set<std::string> subdirs = owned_subdirs();
  bool locked_run = false;
  try {
    for (const std::string& name : entries(dir)) {
      const PathType e = path_type((dir / name).string());
      if (e == PathType::Missing) continue;  // removed since the listing (a run replacing this one)
      if (subdirs.count(name)) {
        if (e != PathType::Directory)
          return "it holds '" + name + "', " + kind(e) + " (tiersim makes " + name + "/ a directory of its own)";
        for (const std::string& sub : entries(dir / name)) {
          const PathType se = path_type((dir / name / sub).string());
          if (se == PathType::Missing) continue;
          if (!owned(name, sub)) return "it holds '" + printable(name + "/" + sub) + "', which is not tiersim output";
          if (se != PathType::File)
            return "it holds '" + printable(name + "/" + sub) + "', " + kind(se) + " where tiersim writes a file";
        }
        continue;
      }
      if (!owned("", name)) return "it holds '" + printable(name) + "', which is not tiersim output";
      if (e != PathType::File) return "it holds '" + printable(name) + "', " + kind(e) + " where tiersim writes a file";
      if (name == kLockName) locked_run = true;
    }
  } catch (const Error& err) {
    return std::string("it cannot be listed (") + err.what() + ")";
  }
  if (!locked_run) return std::string("it holds no tiersim run (no ") + kLockName + ")";
  return "";
}

void remove_run_files(const fs::path& dir) {
  const std::set<std::string> subdirs = owned_subdirs();
  auto unlink_or_throw = [](const fs::path& p) {
    if (::unlink(p.c_str()) != 0 && errno != ENOENT)
      throw Error(p.string() + ": cannot remove the old output: " + std::strerror(errno));
  };
  for (const std::string& name : entries(dir)) {
    if (subdirs.count(name)) {
      for (const std::string& sub : entries(dir / name))
        if (owned(name, sub)) unlink_or_throw(dir / name / sub);
      if (::rmdir((dir / name).c_str()) != 0)
        throw Error((dir / name).string() + ": cannot remove the old output: " + std::strerror(errno));
    } else if (name != kLockName && owned("", name)) {
      unlink_or_throw(dir / name);
    }
  }
}

// ---- The lock ------------------------------------------------------------------------------------

RunLock::RunLock(const std::string& dir, bool create, const std::string& refused) {
  const std::string path = (fs::path(dir) / kLockName).string();
  const int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) {
    const int e = errno;
    if (e == ELOOP) throw Error(path + ": is a symbolic link, not tiersim's lock file; " + refused);
    if (e == ENOENT && !create) throw Error(dir + ": not a tiersim run (no " + kLockName + "); " + refused);
    throw Error(path + ": cannot open the run's lock file: " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw Error(path + ": not a regular file, not tiersim's lock file; " + refused);
  }
  // A few tries: a process that only looks (lock_holder's fallback) holds a shared lock briefly.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int e = errno;
  ::close(fd_);
  fd_ = -1;
  if (e == EWOULDBLOCK || e == EINTR) {
    std::string holder = lock_holder(dir);
    if (holder.empty()) holder = "in use by another tiersim process";
    throw Error(dir + ": " + holder + "; " + refused);
  }
  throw Error(path + ": cannot lock: " + std::strerror(e));
}

RunLock& RunLock::operator=(RunLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string lock_holder(const std::string& dir) {
  const std::string path = (fs::path(dir) / kLockName).string();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  // /proc/locks names the process holding an flock ("1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> ...")
  // without taking a lock of our own, which would make a starting run's lock fail for a moment.
  std::ifstream locks("/proc/locks");
  if (locks) {
    char id[64];
    std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino));
    std::string line;
    while (std::getline(locks, line)) {
      std::istringstream is(line);
      std::string n, type, mode, rw, pid, dev;
      if (!(is >> n >> type >> mode >> rw >> pid >> dev)) continue;
      if (n == "->") continue;  // a waiter, listed below the holder
      if (type == "FLOCK" && dev == id && pid != std::to_string(::getpid()))
        return "in use by another tiersim process (pid " + pid + ")";
    }
    return "";
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy ? "in use by another tiersim process" : "";
}

// ---- Creating the directory ----------------------------------------------------------------------

RunLock prepare_out_dir(const std::string& dir, bool force, const std::function<std::string(const fs::path&)>& why_not,
                        const std::function<void(const fs::path&)>& remove) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error(dir + ": output path exists and is not a directory");
  // Refusals first, while nothing is changed; then the lock; then the same checks again under it
  // (another process may have written the directory meanwhile).
  auto others = [&] {
    std::vector<std::string> e = entries(dir);
    e.erase(std::remove(e.begin(), e.end(), std::string(kLockName)), e.end());
    return !e.empty();
  };
  auto refuse_unless_replaceable = [&] {
    if (const std::string holder = lock_holder(dir); !holder.empty())
      throw Error(dir + ": " + holder + "; nothing was changed");
    if (!force) throw Error(dir + ": output directory exists and is not empty (use --force to replace it)");
    if (const std::string why = why_not(dir); !why.empty()) {
      // A run that took the lock meanwhile may be rewriting the directory as we looked.
      if (const std::string holder = lock_holder(dir); !holder.empty())
        throw Error(dir + ": " + holder + "; nothing was changed");
      throw Error(dir + ": not replaced: --force replaces only an empty directory or a tiersim run, and " + why);
    }
  };
  if (fs::exists(dir, ec) && others()) refuse_unless_replaceable();
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  RunLock lock(dir, true, "nothing was changed");
  if (others()) {
    refuse_unless_replaceable();
    remove(dir);
  }
  return lock;
}

}  // namespace tiersim
