// LaunchTimer (launch_timer.hpp); the step it stamps is in kernels/kernel_timing.cpp.
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>

#include "kernels/cuda/launch_timer.hpp"
#include "kernels/kernel_timing.hpp"

namespace tiersim {

namespace cuda {

// Launches held before their events are resolved without anybody asking (tests that only
// step): bounds the events in use; the records are kept for take_records().
constexpr std::size_t kMaxPending = 4096;

LaunchTimer::~LaunchTimer() {
  if (open_) nvtxRangePop();
  for (auto& p : pending_) {
    if (p.start) cudaEventDestroy(p.start);
    if (p.stop) cudaEventDestroy(p.stop);
  }
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
}

cudaEvent_t LaunchTimer::get_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  TIERSIM_CUDA_CHECK(cudaEventCreate(&e), "timing event");
  return e;
}

KernelRecord& LaunchTimer::begin(const char* name, const std::string& strategy, bool diagnostics) {
  if (open_) throw Error(std::string("LaunchTimer: begin(") + name + ") inside an open launch");
  if (pending_.size() >= kMaxPending) resolve(done_, true);
  Pending p;
  p.rec.kernel = name;
  p.rec.strategy = strategy;
  p.rec.step = telemetry_step();
  p.rec.diagnostics = diagnostics;
  if (window_) window_->fill(p.rec);
  if (diagnostics ? tuning_.kernel_timing : tuning_.timed_at(p.rec.step)) {
    p.start = get_event();
    p.stop = get_event();
  }
  pending_.push_back(std::move(p));
  nvtxRangePushA(name);
  open_ = true;
  Pending& q = pending_.back();
  if (q.start) TIERSIM_CUDA_CHECK(cudaEventRecord(q.start, stream_), std::string("before ") + name);
  return q.rec;
}

KernelRecord& LaunchTimer::end() {
  if (!open_) throw Error("LaunchTimer: end() without begin()");
  open_ = false;
  nvtxRangePop();
  Pending& q = pending_.back();
  if (q.stop) TIERSIM_CUDA_CHECK(cudaEventRecord(q.stop, stream_), "after " + q.rec.kernel);
  return q.rec;
}

void LaunchTimer::add(KernelRecord rec) {
  if (open_) throw Error("LaunchTimer: add(" + rec.kernel + ") inside an open launch");
  if (pending_.size() >= kMaxPending) resolve(done_, true);
  Pending p;
  p.rec = std::move(rec);
  p.host_timed = true;
  pending_.push_back(std::move(p));
}

void LaunchTimer::resolve(std::vector<KernelRecord>& out, bool wait) {
  std::size_t n = open_ ? pending_.size() - 1 : pending_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Pending& p = pending_[i];
    if (p.start && !wait) {
      const cudaError_t q = cudaEventQuery(p.stop);
      if (q == cudaErrorNotReady) {  // this one and the later ones are still running
        n = i;
        break;
      }
      TIERSIM_CUDA_CHECK(q, "waiting for " + p.rec.kernel);
    }
    if (p.start) {
      TIERSIM_CUDA_CHECK(cudaEventSynchronize(p.stop), "waiting for " + p.rec.kernel);
      float ms = 0;
      TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start, p.stop), "timing " + p.rec.kernel);
      p.rec.ms = ms;
      free_events_.push_back(p.start);
      free_events_.push_back(p.stop);
    } else if (!p.host_timed) {
      p.rec.ms = 0;  // timing off
    }
    out.push_back(std::move(p.rec));
  }
  pending_.erase(pending_.begin(), pending_.begin() + std::ptrdiff_t(n));
}

std::vector<KernelRecord> LaunchTimer::take_records(bool wait) {
  std::vector<KernelRecord> out = std::move(done_);
  done_.clear();
  resolve(out, wait);
  return out;
}

}  // namespace cuda
}  // namespace tiersim
