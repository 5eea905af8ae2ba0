// OutputQueue (io/output_queue.hpp): jobs run in order on another thread, at most `slots` heavy
// jobs in flight, the loop's waits are measured, and a failed job stops the queue with its error.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "io/output_queue.hpp"

using namespace tiersim;
using namespace std::chrono_literals;

TEST(OutputQueue, RunsJobsInSubmissionOrderOnAnotherThread) {
  std::vector<int> order;
  std::thread::id writer;
  {
    OutputQueue q(2);
    for (int i = 0; i < 50; ++i)
      q.submit(
          [&, i] {
            order.push_back(i);
            writer = std::this_thread::get_id();
          },
          i % 3 == 0);
    q.drain();
    EXPECT_NE(writer, std::this_thread::get_id());
  }
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[std::size_t(i)], i);
}

TEST(OutputQueue, AtMostSlotsHeavyJobsInFlightAndTheWaitIsMeasured) {
  OutputQueue q(2);
  std::atomic<int> in_flight{0}, most{0};
  auto heavy = [&] {
    const int now = ++in_flight;
    int m = most.load();
    while (now > m && !most.compare_exchange_weak(m, now)) {
    }
    std::this_thread::sleep_for(30ms);
    --in_flight;
  };
  double waited = 0;
  for (int i = 0; i < 6; ++i) waited += q.submit(heavy, true);
  // Two slots, six 30 ms jobs: the loop must have blocked for about four of them.
  EXPECT_GT(waited, 0.08);
  q.drain();
  EXPECT_EQ(most.load(), 1) << "one writer thread runs one job at a time";
  EXPECT_GE(q.busy_seconds(), 0.17);
  EXPECT_GE(q.waited_seconds(), waited);
}

TEST(OutputQueue, LightJobsNeverWaitForSlots) {
  OutputQueue q(1);
  std::atomic<bool> release{false};
  q.submit(
      [&] {
        while (!release) std::this_thread::sleep_for(1ms);
      },
      true);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) q.submit([] {});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
  release = true;
  q.drain();
}

TEST(OutputQueue, AFailedJobStopsTheQueueAndItsErrorComesBackOnce) {
  OutputQueue q(2);
  std::atomic<int> ran{0};
  q.submit([&] { ++ran; });
  q.submit([] { throw Error("disk full: snapshots.d/step_10.h5"); }, true);
  // The job's error comes back once: from this submit, when the failure is seen first (the job is
  // refused), or else from drain() (the job was queued, and is dropped).
  int reported = 0;
  auto reports = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      ++reported;
      EXPECT_STREQ(e.what(), "disk full: snapshots.d/step_10.h5");
    }
  };
  reports([&] { q.submit([&] { ++ran; }, true); });
  reports([&] { q.drain(); });
  EXPECT_EQ(reported, 1) << "the job's error comes back once";
  EXPECT_EQ(ran.load(), 1) << "nothing after a failed write runs";
  EXPECT_THROW(q.submit([&] { ++ran; }), Error);
  EXPECT_NO_THROW(q.drain());
  EXPECT_EQ(ran.load(), 1);
}

TEST(OutputQueue, DestructorFinishesQueuedJobs) {
  std::atomic<int> ran{0};
  {
    OutputQueue q(1);
    for (int i = 0; i < 5; ++i)
      q.submit(
          [&] {
            std::this_thread::sleep_for(2ms);
            ++ran;
          },
          true);
  }
  EXPECT_EQ(ran.load(), 5);
}
