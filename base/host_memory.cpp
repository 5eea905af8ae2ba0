#include "base/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.hpp"

namespace tiersim {

std::size_t host_memory_available() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream is(line.substr(13));
      std::size_t kb = 0;
      is >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

void check_host_memory(double bytes_needed, const std::string& what) {
  const double avail = double(host_memory_available());
  if (avail > 0 && bytes_needed > 0.9 * avail)
    throw Error(what + " needs " + format_bytes(bytes_needed) + " of host memory, " + format_bytes(avail) +
                " available");
}

void* allocate_large(std::size_t bytes) {
  const std::size_t align = bytes < kHugePageBytes ? 4096 : kHugePageBytes;
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (p && align == kHugePageBytes) (void)madvise(p, size, MADV_HUGEPAGE);
  return p;
}

}  // namespace tiersim
