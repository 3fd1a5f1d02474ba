// Measures how fast this machine streams memory into the cores: every thread of the pool
// reads its share of a buffer much larger than the caches with vector loads into several
// accumulators (a one-accumulator loop is latency-bound and under-measures).
#pragma once

#include <cstddef>

#include "kernels/thread_pool.h"

namespace nanoserve::kernels {

// Best of `passes` full reads of a `bytes`-sized buffer, in bytes per second.
double read_bandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int passes = 5);

}  // namespace nanoserve::kernels
