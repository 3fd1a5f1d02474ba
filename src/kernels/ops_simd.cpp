// silu_mul (and gpt-oss's clamped SwiGLU) with Highway: the exponential of a whole vector at once
// (Highway's Exp, within a few ulp of std::exp), the division as a vector division.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/ops_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cmath>

#include "kernels/ops.h"

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

// gpt-oss's clamped SwiGLU (ops.h), the sigmoid's exponential as SiluMul's.
void SwigluClamped(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto one = hn::Set(df, 1.0f), lim = hn::Set(df, limit), minus_lim = hn::Set(df, -limit);
  const auto minus_alpha = hn::Set(df, -alpha), exp_max = hn::Set(df, 88.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto g = hn::Min(hn::LoadU(df, gate + i), lim);
    const auto u = hn::Clamp(hn::LoadU(df, up + i), minus_lim, lim);
    const auto t = hn::Mul(minus_alpha, g);
    const auto in_range = hn::Lt(t, exp_max);  // beyond it the sigmoid is 0 to float precision
    const auto glu = hn::IfThenElseZero(in_range, hn::Div(g, hn::Add(one, hn::Exp(df, hn::Min(t, exp_max)))));
    hn::StoreU(hn::Mul(glu, hn::Add(u, one)), df, out + i);
  }
  swiglu_clamped_reference(gate + i, up + i, out + i, n - i, alpha, limit);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(SiluMul);
HWY_EXPORT(SwigluClamped);

void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
  HWY_DYNAMIC_DISPATCH(SwigluClamped)(gate, up, out, n, alpha, limit);
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SiluMul)(gate, up, out, n);
}

}  // namespace nanoserve::kernels
#endif
