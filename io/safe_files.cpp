#include "io/safe_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace tiersim {

namespace {

std::string why(int e) { return std::strerror(e); }

// Removes whatever is at `path` (a file or a link; never what a link points to). A directory
// there is an error: tiersim never makes one under a file's name.
void remove_entry(const std::string& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return;
  throw Error(path + ": cannot remove: " + why(errno));
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": write failed: " + why(errno));
    }
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace

PathType path_type(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return PathType::Missing;
  if (S_ISLNK(st.st_mode)) return PathType::Link;
  if (S_ISREG(st.st_mode)) return PathType::File;
  if (S_ISDIR(st.st_mode)) return PathType::Directory;
  return PathType::Other;
}

std::string temporary_name(const std::string& path) { return path + ".tmp"; }

std::string fresh_temporary_name(const std::string& path) {
  const std::string tmp = temporary_name(path);
  remove_entry(tmp);
  return tmp;
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot flush: " + why(errno));
  const int synced = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (synced != 0) throw Error(path + ": flush failed: " + why(e));
}

void start_writeback(const std::string& path) noexcept {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  ::close(fd);
}

std::uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? std::uint64_t(st.st_size) : 0;
}

void publish(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    const int e = errno;
    ::unlink(from.c_str());
    throw Error(to + ": cannot replace: " + why(e));
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = fresh_temporary_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp + ": cannot create: " + why(errno));
  try {
    write_all(fd, text, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // fsync: the rename must not become durable before the contents (power loss, not only kill -9).
  const int synced = ::fsync(fd);
  int e = errno;
  const int closed = ::close(fd);
  if (closed != 0) e = errno;
  if (synced != 0 || closed != 0) {
    ::unlink(tmp.c_str());
    throw Error(tmp + ": flush failed: " + why(e));
  }
  publish(tmp, path);
}

void require_real_directory(const std::string& path, bool create) {
  if (create && ::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw Error(path + ": cannot create: " + why(errno));
  switch (path_type(path)) {
    case PathType::Directory:
      return;
    case PathType::Missing:
      throw Error(path + ": missing");
    case PathType::Link:
      throw Error(path + ": is a symbolic link; tiersim writes only into directories of the run itself");
    default:
      throw Error(path + ": is not a directory");
  }
}

std::uint64_t append_to_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    if (e == ELOOP) throw Error(path + ": is a symbolic link; not written through");
    throw Error(path + ": cannot open for appending: " + why(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file; not written");
  }
  try {
    write_all(fd, text, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  const std::uint64_t size = std::uint64_t(st.st_size) + text.size();
  if (::close(fd) != 0) throw Error(path + ": write failed: " + why(errno));
  return size;
}

}  // namespace tiersim
