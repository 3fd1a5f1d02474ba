// silu_mul with Highway: the exponential of a whole vector at once (Highway's Exp, within a
// few ulp of std::exp), the division as a vector division; f32_to_f16_row with F16C.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/ops_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cmath>

#include "kernels/ops.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto one = hn::Set(df, 1.0f);
  // Exp's valid inputs end near 104; below g = -88, silu(g) = g·e^g is under 1e-36: zero.
  const auto exp_max = hn::Set(df, 88.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto g = hn::LoadU(df, gate + i);
    const auto minus_g = hn::Neg(g);
    const auto in_range = hn::Lt(minus_g, exp_max);
    const auto silu = hn::IfThenElseZero(in_range, hn::Div(g, hn::Add(one, hn::Exp(df, hn::Min(minus_g, exp_max)))));
    hn::StoreU(hn::Mul(silu, hn::LoadU(df, up + i)), df, out + i);
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void F32ToF16Row(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // F16C's conversion rounds to nearest even, as tensor::f32_to_f16 does (and quiets a NaN the
  // same way); Highway emulates it with truncation on targets without it.
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto* half = reinterpret_cast<hwy::float16_t*>(out);
  for (; i + N <= n; i += N) hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, x + i)), dh, half + i);
#endif
  for (; i < n; ++i) out[i] = tensor::f32_to_f16(x[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(SiluMul);
HWY_EXPORT(F32ToF16Row);

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SiluMul)(gate, up, out, n);
}

void f32_to_f16_row(const float* x, int64_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(F32ToF16Row)(x, n, out); }

}  // namespace nanoserve::kernels
#endif
