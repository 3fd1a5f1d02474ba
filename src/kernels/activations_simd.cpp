// SIMD versions of the activation quantizers of activations.cpp, bit-identical to them: the
// same block maxima, the same multipliers computed in scalar float, and round-to-nearest-even
// (the SIMD conversion's default rounding, as nearbyint and ggml's nearest_int do); and the
// rounding of activations to F16 / BF16 precision and the KV cache's F16 conversion,
// bit-identical to tensor/fp16.h's.
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

// Rounds x[0..count) * mul to int8 levels in q (and, if u is not null, the levels + 128 in
// u); returns their sum. count is a multiple of the vector length (32 and 16 are, for every
// target's float vectors of at most 16 lanes).
int32_t Levels(const float* x, int count, float mul, int8_t* q, uint8_t* u = nullptr) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int16_t, decltype(df)> d16;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const hn::Rebind<uint8_t, decltype(df)> du8;
  const int N = static_cast<int>(hn::Lanes(df));
  auto sum = hn::Zero(di);
  for (int j = 0; j < count; j += N) {
    // Saturating narrowing clamps to [-128, 127] as the scalar code's clamp does.
    const auto level = hn::NearestInt(hn::Mul(hn::LoadU(df, x + j), hn::Set(df, mul)));
    const auto level8 = hn::DemoteTo(d8, hn::DemoteTo(d16, level));
    hn::StoreU(level8, d8, q + j);
    if (u) hn::StoreU(hn::Xor(hn::BitCast(du8, level8), hn::Set(du8, 0x80)), du8, u + j);
    sum = hn::Add(sum, hn::PromoteTo(di, level8));
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

// Calls put(i, h) with h the F16 vector of x[i, i + N) for each whole vector of x[0, n), and
// returns where the whole vectors end (0 where the target lacks F16C): F16C's conversion rounds
// to nearest even and quiets a NaN as tensor::f32_to_f16 does; targets without it emulate the
// conversion with truncation, so the caller converts the rest with tensor::f32_to_f16.
template <class Put>
int64_t ForEachHalfVector(const float* x, int64_t n, Put&& put) {
  int64_t i = 0;
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  for (; i + N <= n; i += N) put(i, hn::DemoteTo(dh, hn::LoadU(df, x + i)));
#else
  (void)x, (void)n, (void)put;
#endif
  return i;
}

// out[i] = the float that x[i]'s nearest F16 (ties to even) holds, for i < n; out may be x.
void RoundThroughF16(const float* x, int64_t n, float* out) {
  const hn::ScalableTag<float> df;
  int64_t i = ForEachHalfVector(x, n, [&](int64_t at, auto h) { hn::StoreU(hn::PromoteTo(df, h), df, out + at); });
  for (; i < n; ++i) out[i] = tensor::f16_to_f32(tensor::f32_to_f16(x[i]));
}

// out[i] = tensor::f32_to_f16(x[i]) for i < n.
void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  const hn::Rebind<hwy::float16_t, hn::ScalableTag<float>> dh;
  auto* half = reinterpret_cast<hwy::float16_t*>(out);
  int64_t i = ForEachHalfVector(x, n, [&](int64_t at, auto h) { hn::StoreU(h, dh, half + at); });
  for (; i < n; ++i) out[i] = tensor::f32_to_f16(x[i]);
}

// out[i] = the float that x[i]'s nearest BF16 (ties to even) holds, on the bits as
// tensor::f32_to_bf16 does: add 0x7fff plus the kept low bit, clear the low half; a NaN keeps
// its high half with the quiet bit set.
void RoundThroughBF16(const float* x, int64_t n, float* out) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<float, decltype(du)> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto high = hn::Set(du, 0xffff0000u);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto bits = hn::BitCast(du, hn::LoadU(df, x + i));
    const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1));
    const auto rounded = hn::And(hn::Add(bits, hn::Add(hn::Set(du, 0x7fffu), odd)), high);
    const auto nan = hn::Or(hn::And(bits, high), hn::Set(du, 0x400000u));
    const auto is_nan = hn::Gt(hn::And(bits, hn::Set(du, 0x7fffffffu)), hn::Set(du, 0x7f800000u));
    hn::StoreU(hn::BitCast(df, hn::IfThenElse(is_nan, nan, rounded)), df, out + i);
  }
  for (; i < n; ++i) out[i] = tensor::bf16_to_f32(tensor::f32_to_bf16(x[i]));
}

void QuantizeQ8Block32(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u,
                       int32_t* minus_128_sums) {
  constexpr int kB = tensor::kLegacyBlock;
  const int64_t nb = n / kB;
  for (int64_t b = 0; b < nb; ++b, x += kB, q += kB, u += kB) {
    const float amax = AbsMax(x, kB);
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    const int32_t sum = Levels(x, kB, inv, q, u);
    d[b] = amax / 127.0f;  // both scales are rounded to F16 below, a vector at a time
    s[b] = d[b] * static_cast<float>(sum);
    minus_128_sums[b] = -128 * sum;
  }
  RoundThroughF16(d, nb, d);
  RoundThroughF16(s, nb, s);
}

// The signed value of the first of x[0..count) whose magnitude is amax, as the scalar code picks
// it: a vector compare a step, since every decode step's K-quant matmul waits on this rounding
// (a scalar scan was slower: experiments/kernel-notes.md).
float FirstOfMagnitude(const float* x, int count, float amax) {
  const hn::ScalableTag<float> df;
  const int N = static_cast<int>(hn::Lanes(df));
  for (int j = 0; j < count; j += N) {
    const intptr_t lane = hn::FindFirstTrue(df, hn::Eq(hn::Abs(hn::LoadU(df, x + j)), hn::Set(df, amax)));
    if (lane >= 0) return x[j + lane];
  }
  return amax;  // only where no magnitude equals it: a NaN among x
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
    const float max = FirstOfMagnitude(x, kQK, amax);
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
HWY_EXPORT(RoundThroughF16);
HWY_EXPORT(F32ToF16);
HWY_EXPORT(RoundThroughBF16);

void quantize_q8_block32_simd(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u,
                              int32_t* minus_128_sums) {
  HWY_DYNAMIC_DISPATCH(QuantizeQ8Block32)(x, n, q, d, s, u, minus_128_sums);
}

void quantize_q8_k_simd(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums) {
  HWY_DYNAMIC_DISPATCH(QuantizeQ8K)(x, n, q, d, bsums);
}

void round_through_f16_simd(const float* x, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(RoundThroughF16)(x, n, out);
}

void f32_to_f16_row(const float* x, int64_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(F32ToF16)(x, n, out); }

void round_through_bf16_simd(const float* x, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(RoundThroughBF16)(x, n, out);
}

}  // namespace nanoserve::kernels
#endif
