// Checks that an allocation fits before it is made, so that a case too large fails at start
// with the bytes needed and available instead of crashing part-way.
#pragma once

#include <cstddef>
#include <string>

namespace tiersim {
std::size_t host_memory_available();                                   // MemAvailable from /proc/meminfo (0 if unknown)
void check_host_memory(double bytes_needed, const std::string& what);  // throws Error
}  // namespace tiersim
