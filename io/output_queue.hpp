// Output behind the computation. One writer thread runs the output jobs (write a step file,
// commit the index, write a checkpoint, append observables) in the order they were submitted,
// while the time loop goes on stepping. Jobs that hold a staged copy of the state are "heavy":
// at most `slots` of them are in flight, so host memory stays bounded (slots x one state), and
// submit() blocks only when every slot is busy; the time it blocked is returned and summed.
// A job that throws stops the queue: the error comes back, once, from the next submit(),
// drain() or rethrow() on the loop's thread (a full disk ends the run with one line); the jobs
// behind it are dropped, so nothing after a failed write is written.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tiersim {

class OutputQueue {
 public:
  explicit OutputQueue(int slots);
  ~OutputQueue();  // finishes the queued jobs (errors are dropped: call drain() to see them)
  OutputQueue(const OutputQueue&) = delete;
  OutputQueue& operator=(const OutputQueue&) = delete;

  // Queues a job; a heavy one first waits for a free slot. Returns the seconds waited.
  double submit(std::function<void()> job, bool heavy = false);
  // Waits until every queued job has run; returns the seconds waited. Rethrows a job's error.
  double drain();
  // Rethrows a job's error, if one failed (cheap: a check per step).
  void rethrow();

  int slots() const { return slots_; }
  // Totals: seconds the loop waited for a slot or a drain; seconds the writer spent in jobs.
  double waited_seconds() const;
  double busy_seconds() const;

 private:
  void run();
  struct Job {
    std::function<void()> fn;
    bool heavy;
  };
  const int slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  int heavy_in_flight_ = 0;  // queued or running
  bool running_job_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  bool error_reported_ = false;
  double waited_ = 0, busy_ = 0;
  std::thread thread_;
};

}  // namespace tiersim
