// silu_mul with Highway: the exponential of a whole vector at once (Highway's Exp, within a
// few ulp of std::exp), the division as a vector division.
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

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(SiluMul);

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SiluMul)(gate, up, out, n);
}

}  // namespace nanoserve::kernels
#endif
