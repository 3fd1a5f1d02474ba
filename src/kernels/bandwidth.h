// Measures how fast this machine streams memory into the cores: every thread of the pool
// reads its share of a buffer much larger than the caches with vector loads into several
// accumulators (a one-accumulator loop is latency-bound and under-measures).
#pragma once

#include <cstddef>

#include "kernels/thread_pool.h"

namespace nanoserve::kernels {

// Passes of read_bandwidth by default. On a shared machine other tenants' memory traffic comes
// in bursts; five passes (0.2 s) sometimes all fell in one and read half the bandwidth, which
// made decode look faster than memory. Fifteen take about 0.6 s.
constexpr int kBandwidthPasses = 15;

// Best of `passes` full reads of a `bytes`-sized buffer, in bytes per second.
double read_bandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int passes = kBandwidthPasses);

}  // namespace nanoserve::kernels
