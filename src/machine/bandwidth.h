// Measures how fast this machine streams memory into the cores: every thread of the pool
// reads its share of a region much larger than the caches with vector loads into several
// accumulators (a one-accumulator loop is latency-bound and under-measures).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

// Declared, not included: a benchmark that measures on a thread count needs no kernels header.
namespace nanoserve::kernels {
class ThreadPool;
}

namespace nanoserve::machine {

// Passes of read_bandwidth by default: on a shared machine other tenants' memory traffic comes
// in bursts, and a few passes can all fall in one and under-read the bandwidth, which makes
// decode look faster than memory. Chosen by measurement: experiments/kernel-notes.md.
constexpr int kBandwidthPasses = 15;

struct RegionRead {
  double bytes_per_s;
  uint64_t checksum;  // the sum of the region's bytes, each counted once
};

// One read of every byte of `region`, split between the pool's threads (blocks of 16 KiB,
// claimed as ThreadPool::run hands them out). Reads the bytes as they are: a model's weights
// can be read this way, with no memory of its own.
RegionRead read_region(kernels::ThreadPool& pool, std::span<const uint8_t> region);

// Best of `passes` full reads of a `bytes`-sized buffer of its own, in bytes per second.
double read_bandwidth(kernels::ThreadPool& pool, size_t bytes = size_t{1} << 30, int passes = kBandwidthPasses);
// The same on a pool of `threads` threads of its own.
double read_bandwidth(int threads, size_t bytes = size_t{1} << 30, int passes = kBandwidthPasses);

}  // namespace nanoserve::machine
