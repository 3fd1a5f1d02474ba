// What a call of the kernels' thread pool costs beyond its work, as a forward pass makes them:
// serial work on the calling thread (a norm, a rope, the sampling), then a parallel kernel, again
// and again (a decode step of the 6.6M pycoder model makes ~30 such calls in ~0.3 ms). Each
// iteration waits `gap` µs on the caller, then runs one job of two chunks of 2 µs each on a
// pool of two threads: with no cost the iteration takes gap + 2 µs, and `overhead_us` is what it
// took beyond that (the worker's wake-up, the chunk claims, the caller's wait for the last one).
// Time is spent by watching the clock, so the figures do not depend on the CPU's speed.
// ./build/bench/thread_pool_bench --benchmark_repetitions=5 (compare two builds by alternating runs).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "kernels/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

void busy_for(std::chrono::nanoseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

void BM_PoolCall(benchmark::State& state) {
  const auto gap = std::chrono::microseconds(state.range(0));
  constexpr auto kChunk = std::chrono::microseconds(2);
  nanoserve::kernels::ThreadPool pool(2);
  const auto start = Clock::now();
  for (auto _ : state) {
    busy_for(gap);
    pool.run(2, [&](int64_t, int64_t, int) { busy_for(kChunk); });
  }
  const std::chrono::duration<double, std::micro> elapsed = Clock::now() - start;
  const double per_call = elapsed.count() / static_cast<double>(state.iterations());
  state.counters["overhead_us"] = per_call - std::chrono::duration<double, std::micro>(gap + kChunk).count();
}
BENCHMARK(BM_PoolCall)
    ->Name("pool_call/gap_us")
    ->Arg(0)->Arg(1)->Arg(4)->Arg(16)->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
