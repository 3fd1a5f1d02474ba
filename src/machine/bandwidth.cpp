#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "machine/bandwidth.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "machine/bandwidth.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::machine {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The sum of n bytes, with four independent accumulators: each vector's bytes summed in
// groups of 8 by one instruction (x86's psadbw), exact in 64-bit lanes. Integer sums read any
// bytes at full speed (floats could be denormal or NaN, which slows some CPUs' adds).
uint64_t SumBytes(const uint8_t* p, size_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const size_t N = hn::Lanes(d8);
  auto a0 = hn::Zero(d64), a1 = hn::Zero(d64), a2 = hn::Zero(d64), a3 = hn::Zero(d64);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::SumsOf8(hn::LoadU(d8, p + i)));
    a1 = hn::Add(a1, hn::SumsOf8(hn::LoadU(d8, p + i + N)));
    a2 = hn::Add(a2, hn::SumsOf8(hn::LoadU(d8, p + i + 2 * N)));
    a3 = hn::Add(a3, hn::SumsOf8(hn::LoadU(d8, p + i + 3 * N)));
  }
  uint64_t sum = hn::GetLane(hn::SumOfLanes(d64, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) sum += p[i];
  return sum;
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::machine
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/huge_pages.h"
#include "kernels/thread_pool.h"

namespace nanoserve::machine {

HWY_EXPORT(SumBytes);

RegionRead read_region(kernels::ThreadPool& pool, std::span<const uint8_t> region) {
  constexpr size_t kBlock = 16 * 1024;  // bytes per task
  // The blocks start on cache lines. A GGUF file's tensor data may start 32 bytes into one (its
  // alignment is 32), and reads from there are slower than from the next line on
  // (experiments/kernel-notes.md), which made decode look closer to the memory's limit than it
  // was. The bytes before the first line are summed apart.
  constexpr size_t kLine = 64;
  const size_t head = std::min(region.size(), (kLine - reinterpret_cast<uintptr_t>(region.data()) % kLine) % kLine);
  const std::span<const uint8_t> lines = region.subspan(head);
  const size_t n_blocks = (lines.size() + kBlock - 1) / kBlock;
  std::vector<uint64_t> sums(pool.size(), 0);  // per thread, so that the reads are kept
  const auto start = std::chrono::steady_clock::now();
  pool.run(static_cast<int64_t>(n_blocks), [&](int64_t b0, int64_t b1, int thread) {
    const size_t begin = static_cast<size_t>(b0) * kBlock;
    const size_t end = std::min(lines.size(), static_cast<size_t>(b1) * kBlock);
    sums[thread] += HWY_DYNAMIC_DISPATCH(SumBytes)(lines.data() + begin, end - begin);
  });
  uint64_t checksum = HWY_DYNAMIC_DISPATCH(SumBytes)(region.data(), head);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (uint64_t v : sums) checksum += v;
  return {static_cast<double>(region.size()) / s, checksum};
}

double read_bandwidth(kernels::ThreadPool& pool, size_t bytes, int passes) {
  // In huge pages where the kernel allows, as the model's weights are (gguf::File).
  kernels::HugePageBuffer area(std::max<size_t>(bytes, 1));
  std::fill(area.data(), area.data() + area.size(), uint8_t{1});  // written once, so every page is real
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass)
    best = std::max(best, read_region(pool, {area.data(), area.size()}).bytes_per_s);
  return best;
}

double read_bandwidth(int threads, size_t bytes, int passes) {
  kernels::ThreadPool pool(threads);
  return read_bandwidth(pool, bytes, passes);
}

}  // namespace nanoserve::machine
#endif
