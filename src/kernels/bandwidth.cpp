#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/bandwidth.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/bandwidth.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Sums n floats with four independent accumulators (n a multiple of 4 vectors).
float SumFloats(const float* p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (size_t i = 0; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::LoadU(d, p + i));
    a1 = hn::Add(a1, hn::LoadU(d, p + i + N));
    a2 = hn::Add(a2, hn::LoadU(d, p + i + 2 * N));
    a3 = hn::Add(a3, hn::LoadU(d, p + i + 3 * N));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/huge_pages.h"

namespace nanoserve::kernels {

HWY_EXPORT(SumFloats);

double read_bandwidth(ThreadPool& pool, size_t bytes, int passes) {
  constexpr size_t kBlock = 4096;  // floats per task: a multiple of every target's 4 vectors
  const size_t n_blocks = std::max<size_t>(1, bytes / sizeof(float) / kBlock);
  // In huge pages where the kernel allows, as the model's weights are (gguf::File).
  const size_t n = n_blocks * kBlock, size = n * sizeof(float);
  HugePageBuffer area(size);
  float* buffer = reinterpret_cast<float*>(area.data());
  std::fill(buffer, buffer + n, 1.0f);  // written once, so every page is real
  std::vector<float> sink(pool.size());
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.run(static_cast<int64_t>(n_blocks), [&](int64_t b0, int64_t b1, int thread) {
      float sum = 0.0f;
      for (int64_t b = b0; b < b1; ++b) sum += HWY_DYNAMIC_DISPATCH(SumFloats)(buffer + b * kBlock, kBlock);
      sink[thread] += sum;  // keeps the reads from being optimized away
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(size) / s);
  }
  volatile float keep = sink[0];
  (void)keep;
  return best;
}

}  // namespace nanoserve::kernels
#endif
