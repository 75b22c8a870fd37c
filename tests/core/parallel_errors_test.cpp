// ParallelErrors: whatever a work item throws inside an OpenMP region comes out after the region
// on the calling thread, and it is the lowest failing item's error whatever the thread timing.
#include "core/parallel_errors.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <new>
#include <string>
#include <vector>

#include "core/error.h"

namespace difftx {
namespace {

constexpr int64_t kItems = 20000;
constexpr int kThreads = 4;  // more threads than this machine's cores: items interleave

TEST(ParallelErrors, NothingThrownRunsEveryItem) {
  ParallelErrors errors;
  std::vector<int> ran(kItems, 0);
#pragma omp parallel for num_threads(kThreads) schedule(dynamic, 1)
  for (int64_t i = 0; i < kItems; ++i) errors.run(i, [&] { ran[i] = 1; });
  EXPECT_FALSE(errors.failed());
  EXPECT_NO_THROW(errors.rethrow());
  for (int64_t i = 0; i < kItems; ++i) ASSERT_EQ(ran[i], 1) << "item " << i;
}

TEST(ParallelErrors, RethrowsTheLowestFailingItemsError) {
  for (int repeat = 0; repeat < 20; ++repeat) {
    ParallelErrors errors;
    std::vector<int> ran(kItems, 0);
    // Items 1000 + 7k fail; the highest ones are reached first (schedule from the top).
#pragma omp parallel for num_threads(kThreads) schedule(dynamic, 1)
    for (int64_t j = 0; j < kItems; ++j) {
      const int64_t i = kItems - 1 - j;
      errors.run(i, [&] {
        ran[i] = 1;
        if (i >= 1000 && i % 7 == 6) fail("item ", i);
      });
    }
    ASSERT_TRUE(errors.failed());
    try {
      errors.rethrow();
      FAIL() << "rethrow() did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "item 1000");
    }
    for (int64_t i = 0; i <= 1000; ++i) ASSERT_EQ(ran[i], 1) << "item " << i << " below the failure was skipped";
  }
}

TEST(ParallelErrors, CarriesAnyExceptionType) {
  ParallelErrors out_of_memory;
#pragma omp parallel for num_threads(kThreads)
  for (int64_t i = 0; i < 64; ++i) out_of_memory.run(i, [&] {
      if (i == 40) throw std::bad_alloc();
    });
  EXPECT_THROW(out_of_memory.rethrow(), std::bad_alloc);

  ParallelErrors not_std;
#pragma omp parallel for num_threads(kThreads)
  for (int64_t i = 0; i < 64; ++i) not_std.run(i, [&] {
      if (i % 2) throw static_cast<int>(i);
    });
  try {
    not_std.rethrow();
    FAIL() << "rethrow() did not throw";
  } catch (int i) {
    EXPECT_EQ(i, 1);
  }
}

// A failure before a barrier must not leave the other threads waiting: run() returns normally,
// so every thread reaches the barrier.
TEST(ParallelErrors, ThreadsStillMeetAtBarriers) {
  ParallelErrors errors;
  std::atomic<int> after_barrier{0}, team{0};
#pragma omp parallel num_threads(kThreads)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < kThreads; ++i) errors.run(i, [&] { fail("item ", i); });
#pragma omp barrier
    ++after_barrier;
  }
  EXPECT_EQ(after_barrier.load(), team.load());
  EXPECT_THROW(errors.rethrow(), Error);
}

}  // namespace
}  // namespace difftx
