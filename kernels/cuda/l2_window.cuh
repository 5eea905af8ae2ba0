// L2 persistence for one stream: the fourth memory technique (--l2-persist off|on).
//
// An access-policy window tells the L2 which addresses are hot: accesses inside the window are
// marked persisting (with probability hitRatio; the rest get missProp), so they stay in a
// set-aside part of the L2 (the carve-out, cudaLimitPersistingL2CacheSize) while everything
// else competes for the remainder. It pays only when a hot set that would NOT stay in L2 by
// itself fits in the carve-out: a data set that fits L2 anyway gains nothing, and one far
// larger than the carve-out gets a hitRatio well under 1 (only that fraction of its lines may
// persist, so they do not thrash each other).
//
// L2Window is the RAII owner of that policy on one stream:
//  - on: sets the carve-out (the requested bytes, or the hot set / Tuning::l2_fill so that the
//    persisting lines leave room in it, clamped to the device's persisting maximum, read from
//    the device) and, at target(), the window on the stream (cudaStreamSetAttribute, so every
//    kernel launched afterwards on the stream carries it; launches already queued keep the
//    window they were launched with). Window bytes are clamped to accessPolicyMaxWindowSize;
//    hitRatio = min(1, Tuning::l2_fill x carve-out / touched bytes) so the persisting lines fit the
//    carve-out; hitProp persisting, missProp streaming.
//  - the carve-out is not free: on Hopper the set-aside ways are lost to every other access
//    (measured: 10 of 16 ways set aside, no window, slowed streaming kernels 1.8-3.1x), so it is
//    sized to the hot set, never to the device maximum by default.
//  - retargeting (the stencil's ping-pong buffers) is one cudaStreamSetAttribute, and nothing
//    at all when the window does not change.
//  - off, and at destruction: window removed (num_bytes 0), the stream drained, persisting
//    lines reset to normal (cudaCtxResetPersistingL2Cache), the limit restored to the value it
//    had before.
//  - settings the device cannot honour (no persisting L2: compute capability < 8.0, MIG, a
//    persisting maximum of 0, cudaErrorNotSupported) give one warning per process on stderr and
//    the run goes on without a window.
// CUDA graphs copy a stream's window into each kernel node when they are captured: set the
// window before capture (tiersim does not capture graphs today).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "base/strategy.hpp"
#include "base/kernel_record.hpp"

namespace tiersim::cuda {

class L2Window {
 public:
  // Off: inert (no CUDA calls except clearing a window a reused stream might carry).
  // On: `requested` is --l2-persist-bytes (0: size by the hot set), `hot_max` the largest hot
  // set the caller will target; `what` names the caller in the warning.
  L2Window(cudaStream_t stream, L2Persist mode, std::size_t requested, std::size_t hot_max, const std::string& what,
           const Tuning& tuning);
  ~L2Window();
  L2Window(const L2Window&) = delete;
  L2Window& operator=(const L2Window&) = delete;

  // True when the policy is on and the device honours it.
  bool enabled() const { return enabled_; }
  // Points the window at [base, base + bytes) (bytes clamped to the requested size and the
  // device's window maximum). `touched`: the persisting demand, i.e. the bytes of the window
  // that kernels actually access (a padded grid's window holds lines nobody reads; 0: all of
  // it), plus, where the caller knows of them, lines an earlier target left persisting; the
  // hit ratio is min(1, fill x carve-out / touched), so the persisting lines fit the carve-out.
  // No-op when off or when the window is already there.
  void target(const void* base, std::size_t bytes, std::size_t touched = 0);
  // Removes the window from the stream, drains it, resets persisting lines and restores the
  // limit; afterwards the object is inert. Called by the destructor; never throws.
  void off() noexcept;

  // What a launch on this stream runs with now (for telemetry).
  bool window_active() const { return enabled_ && window_bytes_ > 0; }
  std::size_t window_bytes() const { return window_active() ? window_bytes_ : 0; }
  float hit_ratio() const { return window_active() ? hit_ratio_ : 0.f; }
  std::size_t carveout() const { return carveout_; }
  cudaStream_t stream() const { return stream_; }
  void fill(KernelRecord& r) const {
    r.l2_window = window_active();
    r.l2_window_bytes = double(window_bytes());
    r.l2_hit_ratio = hit_ratio();
  }

 private:
  cudaStream_t stream_ = nullptr;
  bool enabled_ = false;
  std::size_t requested_ = 0, window_max_ = 0;
  std::size_t carveout_ = 0, previous_limit_ = 0;
  double fill_ = kDefaultL2Fill;  // Tuning::l2_fill
  bool miss_streaming_ = true;    // Tuning::l2_miss_streaming
  const void* base_ = nullptr;
  std::size_t window_bytes_ = 0;
  float hit_ratio_ = 0;
};

}  // namespace tiersim::cuda
