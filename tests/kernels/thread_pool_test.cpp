#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/thread_pool.h"

namespace nanoserve::kernels {
namespace {

TEST(ThreadPool, EveryIndexRunsOnceInGrainAlignedChunks) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 7, 100, 1001, 200000}) {
      for (int64_t grain : {1, 4}) {
        std::vector<std::atomic<int>> hits(n);
        pool.run(
            n,
            [&](int64_t begin, int64_t end, int thread) {
              ASSERT_LT(begin, end);
              ASSERT_GE(thread, 0);
              ASSERT_LT(thread, threads);
              ASSERT_EQ(begin % grain, 0);
              if (end != n) {
                ASSERT_EQ(end % grain, 0);
              }
              for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
            },
            grain);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
      }
    }
  }
}

// A worker that is slow to take its share (here: busy in a long chunk) does not hold back
// the rest: the caller claims the remaining chunks itself.
TEST(ThreadPool, CallerTakesChunksNobodyElseClaims) {
  ThreadPool pool(2);
  std::atomic<int> by_caller{0};
  pool.run(64, [&](int64_t, int64_t, int thread) {
    if (thread == 0) by_caller.fetch_add(1);
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  EXPECT_GE(by_caller.load(), 4);  // of about 15 chunks; the sleeping worker holds one or two
}

// The chunks one run hands out, sorted; asserts that they cover [0, n) exactly once, each
// starting at a multiple of `grain`.
std::vector<std::pair<int64_t, int64_t>> chunks_of(ThreadPool& pool, int64_t n, int64_t grain,
                                                   ThreadPool::Split split = ThreadPool::Split::kGuided) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  pool.run(
      n,
      [&](int64_t begin, int64_t end, int) {
        std::lock_guard<std::mutex> lock(mutex);
        chunks.emplace_back(begin, end);
      },
      grain, split);
  std::sort(chunks.begin(), chunks.end());
  int64_t next = 0;
  for (const auto& [begin, end] : chunks) {
    EXPECT_EQ(begin, next) << "n=" << n;
    EXPECT_EQ(begin % grain, 0) << "n=" << n;
    next = end;
  }
  EXPECT_EQ(next, n);
  return chunks;
}

// Chunks start long and shrink to the grain, and together they cover [0, n) exactly once,
// also for an n whose schedule would not fit the pool's table (its last chunk takes the rest).
TEST(ThreadPool, ChunksShrinkAndCoverHugeJobsExactlyOnce) {
  ThreadPool pool(2);
  for (int64_t n : {int64_t{100000}, (int64_t{1} << 32) + 12345}) {
    const auto chunks = chunks_of(pool, n, 16);
    EXPECT_LT(chunks.size(), 200u);  // a few dozen per job, not one per grain
    if (n == 100000) {
      EXPECT_GE(chunks.front().second, n / 4);  // the first claim: a quarter of the job
      EXPECT_LE(chunks.back().second - chunks.back().first, 32);  // the tail: a grain or two
    }
  }
}

// For streaming loops each thread's first chunk is most of its share (fewer chunk starts:
// each is a new stream); the rest still shrinks to the grain, and every index runs once.
TEST(ThreadPool, StreamsSplitGivesEachThreadOneLongChunkFirst) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {int64_t{7}, int64_t{100}, int64_t{4864}, int64_t{151936}}) {
      const auto chunks = chunks_of(pool, n, 16, ThreadPool::Split::kStreams);
      if (n >= 4864) {
        for (int t = 0; t < threads; ++t) {
          const int64_t length = chunks[t].second - chunks[t].first;
          EXPECT_GE(length, n / threads * 7 / 8) << "n=" << n << " chunk " << t;
          EXPECT_LE(length, n / threads) << "n=" << n << " chunk " << t;
        }
        EXPECT_LE(chunks.back().second - chunks.back().first, 32);  // the tail: a grain or two
      }
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
