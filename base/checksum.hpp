// Checksums of bytes a run wrote. FNV-1a (64 bits): a cheap fingerprint, to tell later whether a
// file still holds them (telemetry.csv's part up to a checkpoint). Fletcher-32 as HDF5's filter
// computes it: checkpoints compute it themselves, chunk by chunk on several threads, and hand
// HDF5 the finished chunks (io/hdf5_library.hpp). Both catch damage, not a forger.
#pragma once

#include <cstddef>
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

// HDF5's Fletcher-32 (H5Z_FILTER_FLETCHER32) of `bytes` bytes: the data read as big-endian 16-bit
// words (an odd last byte as the high half of a word), both sums folded to 16 bits after every
// 360 words (the most that cannot overflow 32 bits) and once more at the end; sum2 in the high
// half. The filter stores it after the chunk, least significant byte first.
inline std::uint32_t fletcher32_hdf5(const void* data, std::size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::uint32_t sum1 = 0, sum2 = 0;
  auto fold = [](std::uint32_t s) { return (s & 0xffffu) + (s >> 16); };
  for (std::size_t words = bytes / 2; words > 0;) {
    const std::size_t block = words < 360 ? words : 360;
    words -= block;
    for (std::size_t i = 0; i < block; ++i, p += 2) {
      sum1 += std::uint32_t(p[0]) << 8 | std::uint32_t(p[1]);
      sum2 += sum1;
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  if (bytes % 2) {
    sum1 += std::uint32_t(*p) << 8;
    sum2 += sum1;
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  return fold(sum2) << 16 | fold(sum1);
}

}  // namespace tiersim
