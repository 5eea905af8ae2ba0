// Hardware counters through CUPTI (kernels/hw_counters.hpp) against an operation whose DRAM
// traffic is known: a float4 fill of B bytes (writes B) and a float4 copy of B bytes into an
// equal buffer (reads B, writes B), with B far larger than L2 so that nothing is served from
// it. Each test skips with the reason when no GPU is usable or counters cannot be read here
// (not permitted, not supported, built without CUPTI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/hw_counters.hpp"
#include "base/error.hpp"

namespace tiersim {
namespace {

std::unique_ptr<HardwareCounters> counters_or_skip_reason(std::string& why) {
  auto c = make_hardware_counters(&why);
  if (!c) {
    EXPECT_FALSE(why.empty()) << "make_hardware_counters returned nullptr without a reason";
  }
  return c;
}

TEST(HardwareCounters, UnavailableSaysWhy) {
  std::string why;
  auto c = make_hardware_counters(&why);
  if (c) {
    EXPECT_TRUE(why.empty()) << why;
    GTEST_SKIP() << "counters are available here; nothing to explain";
  }
  EXPECT_FALSE(why.empty());
  std::cout << "hardware counters unavailable: " << why << "\n";
}

TEST(HardwareCounters, ProbeCopyDramBytesWithinTenPercent) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  std::string why;
  auto counters = counters_or_skip_reason(why);
  if (!counters) GTEST_SKIP() << "hardware counters unavailable: " << why;

  // 1 GiB, or 16 x L2 where L2 is larger; both buffers must fit with room to spare.
  std::size_t bytes = std::max<std::size_t>(std::size_t{1} << 30, 16 * d.l2_bytes);
  if (d.free_mem > 0 && 3 * bytes > d.free_mem)
    GTEST_SKIP() << "not enough free device memory for 2 x " << bytes << " bytes";

  counters->begin();
  const double event_ms = run_counter_probe_copy(bytes);
  const std::vector<KernelCounters> rows = counters->end();

  std::cout << "device: " << d.name << " (L2 " << d.l2_bytes / 1e6 << " MB), probe buffers 2 x " << bytes / 1e6
            << " MB; copy kernel under replay, events: " << event_ms << " ms\n";
  print_counters_table(std::cout, rows);

  ASSERT_EQ(rows.size(), 2u) << "one entry per kernel launch: fill, copy";
  const KernelCounters& fill = rows[0];
  const KernelCounters& copy = rows[1];
  EXPECT_NE(fill.kernel.find("tiersim_counter_probe_fill"), std::string::npos) << fill.kernel;
  EXPECT_NE(copy.kernel.find("tiersim_counter_probe_copy"), std::string::npos) << copy.kernel;

  const double b = static_cast<double>(bytes);
  std::cout << "copy: DRAM read " << copy.dram_read_bytes / b << " x bytes, write " << copy.dram_write_bytes / b
            << " x bytes, " << (copy.dram_read_bytes + copy.dram_write_bytes) / (copy.duration_ms * 1e6)
            << " GB/s DRAM over the counters' duration\n";
  EXPECT_NEAR(copy.dram_read_bytes, b, 0.10 * b);
  EXPECT_NEAR(copy.dram_write_bytes, b, 0.10 * b);
  EXPECT_GT(copy.duration_ms, 0.0);
  EXPECT_GE(copy.l2_hit_rate, 0.0);
  EXPECT_LE(copy.l2_hit_rate, 1.0);

  EXPECT_NEAR(fill.dram_write_bytes, b, 0.10 * b);
  EXPECT_LT(fill.dram_read_bytes, 0.10 * b);
  EXPECT_GT(fill.duration_ms, 0.0);
}

TEST(HardwareCounters, SessionsRepeatAndMisuseThrows) {
  const DeviceInfo d = query_device();
  if (!d.usable) GTEST_SKIP() << "no usable GPU: " << d.why_not;
  std::string why;
  auto counters = counters_or_skip_reason(why);
  if (!counters) GTEST_SKIP() << "hardware counters unavailable: " << why;

  EXPECT_THROW(counters->end(), Error);
  for (int session = 0; session < 2; ++session) {
    counters->begin();
    EXPECT_THROW(counters->begin(), Error);
    run_counter_probe_copy(std::size_t{4} << 20);
    const std::vector<KernelCounters> rows = counters->end();
    ASSERT_EQ(rows.size(), 2u) << "session " << session;
    EXPECT_GT(rows[1].duration_ms, 0.0);
  }
  // Nothing launched between begin() and end(): no entries.
  counters->begin();
  EXPECT_TRUE(counters->end().empty());
}

}  // namespace
}  // namespace tiersim
