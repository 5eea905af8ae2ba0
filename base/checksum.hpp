// FNV-1a (64 bits): a cheap fingerprint of bytes a run wrote, to tell later whether a file still
// holds them (telemetry.csv's part up to a checkpoint). It catches damage, not a forger.
#pragma once

#include <cstdint>
#include <string_view>

namespace tiersim {

inline constexpr std::uint64_t kFnv1aStart = 14695981039346656037ull;

// The fingerprint of `bytes` continuing from `h` (kFnv1aStart for the first bytes).
inline std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnv1aStart) {
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace tiersim
