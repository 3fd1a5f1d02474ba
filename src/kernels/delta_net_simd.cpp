// delta_net_step with the state's rows in vectors: a block of columns at a time, its
// accumulators in registers while every row of the block is read once per pass.
#include <algorithm>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/delta_net_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/delta_net.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int64_t kBlockVectors = 4;  // columns a pass keeps in registers: 4 vectors

void DeltaNetStep(float* s, const float* q, const float* k, const float* v, float beta, float decay, float scale,
                  float* out, int64_t d) {
  const hn::ScalableTag<float> df;
  const auto N = static_cast<int64_t>(hn::Lanes(df));
  if (d % N != 0) return delta_net_step_reference(s, q, k, v, beta, decay, scale, out, d);
  const auto vdecay = hn::Set(df, decay), vbeta = hn::Set(df, beta), vscale = hn::Set(df, scale);
  for (int64_t j0 = 0; j0 < d; j0 += kBlockVectors * N) {
    const int64_t vectors = std::min<int64_t>(kBlockVectors, (d - j0) / N);
    hn::Vec<decltype(df)> acc[kBlockVectors];
    for (int64_t b = 0; b < kBlockVectors; ++b) acc[b] = hn::Zero(df);
    for (int64_t i = 0; i < d; ++i) {  // Sᵀk of the block's columns (decayed below: S is read only)
      const float* row = s + i * d + j0;
      const auto ki = hn::Set(df, k[i]);
      for (int64_t b = 0; b < vectors; ++b) acc[b] = hn::MulAdd(hn::LoadU(df, row + b * N), ki, acc[b]);
    }
    hn::Vec<decltype(df)> delta[kBlockVectors];
    for (int64_t b = 0; b < vectors; ++b) {
      delta[b] = hn::Mul(vbeta, hn::Sub(hn::LoadU(df, v + j0 + b * N), hn::Mul(acc[b], vdecay)));
      acc[b] = hn::Zero(df);
    }
    for (int64_t i = 0; i < d; ++i) {  // decay, learn v at k, and read at q: one write of each row
      float* row = s + i * d + j0;
      const auto ki = hn::Set(df, k[i]), qi = hn::Set(df, q[i]);
      for (int64_t b = 0; b < vectors; ++b) {
        const auto x = hn::MulAdd(ki, delta[b], hn::Mul(hn::LoadU(df, row + b * N), vdecay));
        hn::StoreU(x, df, row + b * N);
        acc[b] = hn::MulAdd(x, qi, acc[b]);
      }
    }
    for (int64_t b = 0; b < vectors; ++b) hn::StoreU(hn::Mul(acc[b], vscale), df, out + j0 + b * N);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(DeltaNetStep);

void delta_net_step(float* s, const float* q, const float* k, const float* v, float beta, float decay, float scale,
                    float* out, int64_t d) {
  HWY_DYNAMIC_DISPATCH(DeltaNetStep)(s, q, k, v, beta, decay, scale, out, d);
}

}  // namespace nanoserve::kernels
#endif
