#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/every_target.h"
#include "kernels/thread_pool.h"
#include "machine/bandwidth.h"

namespace nanoserve::machine {
namespace {

// bench-engine reads a model's weights between decode steps to measure the bandwidth decode
// had: every byte once, whatever its value, however the threads split the region. The
// checksum shows it: a missed tail or block, or a block read twice, changes the sum.
TEST(Bandwidth, ReadRegionReadsEveryByteOnceOnEveryTarget) {
  constexpr size_t kLine = 64, kLongest = (3 << 20) + 4093;  // blocks of 16 KiB and a part block of odd length
  std::vector<uint8_t> bytes(kLongest + 2 * kLine);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  const uint8_t* line = bytes.data() + (kLine - reinterpret_cast<uintptr_t>(bytes.data()) % kLine) % kLine;
  for (int threads : {1, 2, 3}) {
    kernels::ThreadPool pool(threads);
    for (size_t size : {size_t{0}, size_t{1}, size_t{63}, size_t{16384}, size_t{16385}, kLongest}) {
      for (size_t shift : {size_t{0}, size_t{1}, size_t{32}}) {  // where in a cache line the region starts
        const std::span<const uint8_t> region(line + shift, size);
        const uint64_t expected = std::accumulate(region.begin(), region.end(), uint64_t{0});
        for (int64_t target : kernels::EverySimdTarget()) {
          const RegionRead read = read_region(pool, region);
          EXPECT_EQ(read.checksum, expected) << hwy::TargetName(target) << ", " << size << " bytes from +" << shift
                                             << ", " << threads << " threads";
          EXPECT_GE(read.bytes_per_s, 0.0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace nanoserve::machine
