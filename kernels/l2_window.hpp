// What the L2 persistence code (kernels/cuda/l2_window.cu) can tell a test or a benchmark
// without CUDA headers: whether this device can honour --l2-persist on, the device limit as
// it is now, and the access-policy window read back from the stream of every live window.
// Plain C++; a build without CUDA answers "not supported" (kernels/no_cuda).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/strategy.hpp"

namespace tiersim {

// Whether --l2-persist on can take effect here; why not where it cannot.
struct L2Support {
  bool supported = false;
  std::string why_not;
  std::size_t l2_bytes = 0, persisting_max = 0, window_max = 0;
};
L2Support l2_persistence_support();

// One live window, as its stream reports it (cudaStreamGetAttribute), and what the window
// object itself holds.
struct L2StreamWindow {
  const void* base = nullptr;
  std::size_t bytes = 0;  // num_bytes read back from the stream (0: no window)
  float hit_ratio = 0;
  bool hit_persisting = false;  // hitProp == cudaAccessPropertyPersisting
  bool miss_streaming = false;  // missProp == cudaAccessPropertyStreaming
  std::size_t carveout = 0;     // the persisting limit this window set (as read back)
};

struct L2ProbeState {
  std::size_t limit_now = 0;         // cudaLimitPersistingL2CacheSize now
  std::vector<L2StreamWindow> live;  // every window object with persistence on
  // The last window released: its stream's attribute read back after it was cleared, and the
  // limit before it was set and after it was restored.
  bool released_any = false;
  std::size_t released_stream_bytes = 0;
  std::size_t released_limit_before = 0, released_limit_after = 0;
  bool released_reset = false;  // cudaCtxResetPersistingL2Cache succeeded
};
L2ProbeState l2_probe();

// Median time (ms) of a read-only kernel that sums `bytes` of device memory, `reps` launches
// after 3 warm-up launches: a data set of about half the L2 runs from L2, so persisting lines
// left behind by someone would show as a slower probe.
double l2_read_probe_ms(std::size_t bytes, int reps);

// A deliberately bad citizen, for the tests' control experiment: sets the persisting limit to
// `carveout`, reads `bytes` through a persisting window on a private stream, then removes the
// window WITHOUT resetting the persisting lines or restoring the limit. Returns the limit that
// was in place before, to hand to l2_cleanup_after_control().
std::size_t l2_leave_persisting_lines(std::size_t bytes, std::size_t carveout);
void l2_cleanup_after_control(std::size_t previous_limit);

}  // namespace tiersim
