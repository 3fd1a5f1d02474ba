#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "kernels/thread_pool.h"

namespace nanoserve::kernels {
namespace {

TEST(ThreadPool, EveryIndexRunsOnceInContiguousRanges) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(n);
      std::vector<int> owner(n, -1);
      pool.run(n, [&](int64_t begin, int64_t end, int thread) {
        ASSERT_LT(begin, end);
        ASSERT_GE(thread, 0);
        ASSERT_LT(thread, threads);
        for (int64_t i = begin; i < end; ++i) {
          hits[i].fetch_add(1);
          owner[i] = thread;
        }
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
      for (int64_t i = 1; i < n; ++i) ASSERT_LE(owner[i - 1], owner[i]);  // ranges in thread order
    }
  }
}

TEST(ThreadPool, ManyRunsBackToBack) {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  for (int k = 0; k < 2000; ++k)
    pool.run(64, [&](int64_t begin, int64_t end, int) { total.fetch_add(end - begin); });
  EXPECT_EQ(total.load(), 2000 * 64);
  pool.run(0, [&](int64_t, int64_t, int) { FAIL(); });
}

TEST(ThreadPool, PhysicalCoresIsPositive) { EXPECT_GE(ThreadPool::physical_cores(), 1); }

}  // namespace
}  // namespace nanoserve::kernels
