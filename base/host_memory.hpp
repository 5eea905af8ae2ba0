// Host memory: checks that an allocation fits before it is made, so that a case too large fails
// at start with the bytes needed and available instead of crashing part-way; and large blocks on
// huge pages.
#pragma once

#include <cstddef>
#include <string>

namespace tiersim {
std::size_t host_memory_available();                                   // MemAvailable from /proc/meminfo (0 if unknown)
void check_host_memory(double bytes_needed, const std::string& what);  // throws Error

// A block of `bytes`, released by std::free; nullptr when out of memory. From 2 MB up it is
// 2 MB-aligned and advised as transparent huge pages (a hint: 4 KB pages where the system
// declines), below that 4 KB-aligned. A field of a 512^3 grid is a gigabyte in double: on huge
// pages its first touch takes a 512th of the page faults and freeing it unmaps 512 times fewer
// pages (docs/performance.md, "End to end": the initial states and page-locked buffers).
inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;
void* allocate_large(std::size_t bytes);
}  // namespace tiersim
