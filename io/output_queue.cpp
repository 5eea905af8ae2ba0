#include "io/output_queue.hpp"

#include <chrono>

#include "base/error.hpp"

namespace tiersim {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

OutputQueue::OutputQueue(int slots) : slots_(slots < 1 ? 1 : slots), thread_([this] { run(); }) {}

OutputQueue::~OutputQueue() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void OutputQueue::run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ and nothing left
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lk.unlock();
    const auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr err;
    try {
      job.fn();
    } catch (...) {
      err = std::current_exception();
    }
    const double took = seconds_since(t0);
    job.fn = nullptr;  // release the staged state before the slot is given back
    lk.lock();
    busy_ += took;
    running_job_ = false;
    if (job.heavy) --heavy_in_flight_;
    if (err && !error_) {
      error_ = err;
      // Nothing after a failed write is written: the jobs behind it are dropped.
      for (const Job& j : jobs_)
        if (j.heavy) --heavy_in_flight_;
      jobs_.clear();
    }
    cv_.notify_all();
  }
}

void OutputQueue::rethrow() {
  std::lock_guard<std::mutex> lk(mu_);
  if (error_ && !error_reported_) {
    error_reported_ = true;
    std::rethrow_exception(error_);
  }
}

double OutputQueue::submit(std::function<void()> job, bool heavy) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(mu_);
  if (heavy) cv_.wait(lk, [&] { return heavy_in_flight_ < slots_ || error_; });
  const double waited = seconds_since(t0);
  waited_ += waited;
  if (error_) {
    if (error_reported_) throw Error("output: an earlier write failed");
    error_reported_ = true;
    std::rethrow_exception(error_);
  }
  if (heavy) ++heavy_in_flight_;
  jobs_.push_back({std::move(job), heavy});
  lk.unlock();
  cv_.notify_all();
  return waited;
}

double OutputQueue::drain() {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return (jobs_.empty() && !running_job_) || error_; });
  const double waited = seconds_since(t0);
  waited_ += waited;
  if (error_ && !error_reported_) {
    error_reported_ = true;
    std::rethrow_exception(error_);
  }
  return waited;
}

double OutputQueue::waited_seconds() const {
  std::lock_guard<std::mutex> lk(mu_);
  return waited_;
}

double OutputQueue::busy_seconds() const {
  std::lock_guard<std::mutex> lk(mu_);
  return busy_;
}

}  // namespace tiersim
