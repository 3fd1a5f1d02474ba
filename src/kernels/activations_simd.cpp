// SIMD versions of the activation quantizers of activations.cpp, bit-identical to them: the
// same block maxima, the same multipliers computed in scalar float, and round-to-nearest-even
// (the SIMD conversion's default rounding, as nearbyint and ggml's nearest_int do).
#include <algorithm>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/activations_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/activations.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rounds x[0..count) * mul to int8 levels in q; returns their sum. count is a multiple of the
// vector length (32 and 16 are, for every target's float vectors of at most 16 lanes).
int32_t Levels(const float* x, int count, float mul, int8_t* q) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int16_t, decltype(df)> d16;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const int N = static_cast<int>(hn::Lanes(df));
  auto sum = hn::Zero(di);
  for (int j = 0; j < count; j += N) {
    // Saturating narrowing clamps to [-128, 127] as the scalar code's clamp does.
    const auto level = hn::NearestInt(hn::Mul(hn::LoadU(df, x + j), hn::Set(df, mul)));
    hn::StoreU(hn::DemoteTo(d8, hn::DemoteTo(d16, level)), d8, q + j);
    sum = hn::Add(sum, hn::PromoteTo(di, hn::LoadU(d8, q + j)));
  }
  return hn::GetLane(hn::SumOfLanes(di, sum));
}

float AbsMax(const float* x, int count) {
  const hn::ScalableTag<float> df;
  const int N = static_cast<int>(hn::Lanes(df));
  auto m = hn::Zero(df);
  for (int j = 0; j < count; j += N) m = hn::Max(m, hn::Abs(hn::LoadU(df, x + j)));
  return hn::GetLane(hn::MaxOfLanes(df, m));
}

void QuantizeQ8Block32(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u) {
  constexpr int kB = tensor::kLegacyBlock;
  const hn::CappedTag<uint8_t, kB> du;  // at most one block per vector
  for (int64_t b = 0; b < n / kB; ++b, x += kB, q += kB, u += kB) {
    const float amax = AbsMax(x, kB);
    const float scale = amax / 127.0f;
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    const int32_t sum = Levels(x, kB, inv, q);
    for (int j = 0; j < kB; j += static_cast<int>(hn::Lanes(du)))
      hn::StoreU(hn::Xor(hn::LoadU(du, reinterpret_cast<const uint8_t*>(q + j)), hn::Set(du, 0x80)), du, u + j);
    d[b] = tensor::f16_to_f32(tensor::f32_to_f16(scale));
    s[b] = tensor::f16_to_f32(tensor::f32_to_f16(scale * static_cast<float>(sum)));
  }
}

void QuantizeQ8K(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums) {
  constexpr int kQK = tensor::kSuperBlock;
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, q += kQK) {
    const float amax = AbsMax(x, kQK);
    if (amax == 0.0f) {
      std::fill_n(q, kQK, int8_t{0});
      std::fill_n(bsums + b * (kQK / 16), kQK / 16, int16_t{0});
      d[b] = 0.0f;
      continue;
    }
    // The signed value of the first element of largest magnitude, as the scalar code picks it.
    const float max = *std::find_if(x, x + kQK, [amax](float v) { return std::fabs(v) == amax; });
    const float iscale = -127.0f / max;
    for (int g = 0; g < kQK / 16; ++g) bsums[b * (kQK / 16) + g] = static_cast<int16_t>(Levels(x + 16 * g, 16, iscale, q + 16 * g));
    d[b] = 1.0f / iscale;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(QuantizeQ8Block32);
HWY_EXPORT(QuantizeQ8K);

void quantize_q8_block32_simd(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u) {
  HWY_DYNAMIC_DISPATCH(QuantizeQ8Block32)(x, n, q, d, s, u);
}

void quantize_q8_k_simd(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums) {
  HWY_DYNAMIC_DISPATCH(QuantizeQ8K)(x, n, q, d, bsums);
}

}  // namespace nanoserve::kernels
#endif
