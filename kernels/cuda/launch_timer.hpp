// The one timing path of the CUDA engines (N-body and stencil): every kernel launch sits
// between begin() and end(), which
//  - push and pop an NVTX range named after the kernel (Nsight Systems/Compute show the same
//    names as telemetry.csv),
//  - record a CUDA event pair on the engine's stream (never a host clock, never a
//    synchronisation in the hot loop), unless the strategy's Tuning switched timing off or
//    the step is not one of every Tuning::timing_every. Each launch has its own pair: sharing
//    one event between consecutive launches would charge a kernel with the idle time before it
//    whenever the host falls behind the GPU,
//  - copy the L2 access-policy window the launch runs with into the KernelRecord.
// take_records(true) waits for the last stop events (cudaEventSynchronize) and resolves the
// times; take_records(false) resolves only the launches that have finished (cudaEventQuery), so
// the time loop never waits for the GPU just to read its clocks. Each record carries the step
// that launched it (telemetry_step()). Events are pooled and reused.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/l2_window.cuh"
#include "base/kernel_record.hpp"

namespace tiersim::cuda {

// A stream the engine owns; declared before the L2Window and LaunchTimer that use it, so it is
// destroyed after them. Blocking (cudaStreamDefault): ordered with the legacy default stream,
// which synchronous copies and process-wide uploads use.
class OwnedStream {
 public:
  // Highest: the device's highest priority (a stream whose short kernels, such as NCCL's, should
  // get SMs ahead of a long kernel queued beside them).
  enum class Priority { Default, Highest };
  explicit OwnedStream(unsigned flags = cudaStreamDefault, Priority priority = Priority::Default) {
    int least = 0, greatest = 0;
    if (priority == Priority::Highest)
      TIERSIM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest), "stream priorities");
    TIERSIM_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, flags, greatest), "engine stream");
  }
  ~OwnedStream() {
    if (s_) cudaStreamDestroy(s_);  // no throw from a destructor
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// An event, destroyed with its owner: for ordering streams, or (timing) for timing them.
class OwnedEvent {
 public:
  explicit OwnedEvent(bool timing = false) {
    TIERSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming), "event");
  }
  ~OwnedEvent() {
    if (e_) cudaEventDestroy(e_);
  }
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class LaunchTimer {
 public:
  LaunchTimer(cudaStream_t stream, const L2Window* window, const Tuning& tuning)
      : stream_(stream), window_(window), tuning_(tuning) {}
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  // Opens one launch: `name` for NVTX (and the record, unless the driver names it); strategy
  // for the record. Returns the record for the driver to fill (kernel name, cost model); it
  // stays valid until end().
  // diagnostics: a pass of the diagnostics (KernelRecord::diagnostics), timed whenever timing is
  // on, not only on every Tuning::timing_every-th step.
  KernelRecord& begin(const char* name, const std::string& strategy, bool diagnostics = false);
  // Closes the launch opened by begin(); returns its record (to add the cost model afterwards).
  KernelRecord& end();
  // A record timed by the caller on the host (rec.ms set: an exchange between ranks that waits
  // for its copies), kept in order with the launches.
  void add(KernelRecord rec);
  // Every closed launch since the last call, in launch order, times resolved.
  std::vector<KernelRecord> take_records(bool wait = true);

 private:
  struct Pending {
    KernelRecord rec;
    cudaEvent_t start = nullptr, stop = nullptr;
    bool host_timed = false;  // add(): rec.ms is final
  };
  cudaEvent_t get_event();
  void resolve(std::vector<KernelRecord>& out, bool wait);

  cudaStream_t stream_;
  const L2Window* window_;
  Tuning tuning_;
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;
  std::vector<KernelRecord> done_;  // resolved early (many launches and nobody taking them)
  bool open_ = false;
};

}  // namespace tiersim::cuda
