#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace tiersim {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp + ": cannot create: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(tmp + ": write failed: " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  // fsync: the rename must not become durable before the contents (power loss, not only kill -9).
  const int synced = ::fsync(fd);
  int e = errno;
  const int closed = ::close(fd);
  if (closed != 0) e = errno;
  if (synced != 0 || closed != 0) {
    ::unlink(tmp.c_str());
    throw Error(tmp + ": flush failed: " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot replace: " + std::strerror(e));
  }
}

}  // namespace tiersim
