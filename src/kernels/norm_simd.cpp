// rms_norm with Highway: the squares' chains in the lanes of double vectors (at most
// kNormChains lanes each, as many vectors as make up the chains), the scaling in float vectors.
// The chains see their elements in the reference's order, so the sum is its bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/norm.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void RmsNorm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  const hn::CappedTag<double, kNormChains> dd;
  const hn::Rebind<float, decltype(dd)> dh;  // as many floats as a double vector has lanes
  const int64_t N = static_cast<int64_t>(hn::Lanes(dd));
  const int64_t vectors = kNormChains / N;  // chain c in lane c % N of vector c / N
  hn::Vec<decltype(dd)> acc[kNormChains];
  for (int64_t v = 0; v < vectors; ++v) acc[v] = hn::Zero(dd);
  int64_t i = 0;
  for (; i + kNormChains <= n; i += kNormChains)
    for (int64_t v = 0; v < vectors; ++v) {
      const auto xv = hn::LoadU(dh, x + i + v * N);
      acc[v] = hn::Add(acc[v], hn::PromoteTo(dd, hn::Mul(xv, xv)));  // the square rounded to float, as the reference
    }
  HWY_ALIGN double chains[kNormChains];
  for (int64_t v = 0; v < vectors; ++v) hn::Store(acc[v], dd, chains + v * N);
  const float scale = rms_scale(chains, x, i, n, eps);
  const hn::ScalableTag<float> df;
  const int64_t F = static_cast<int64_t>(hn::Lanes(df));
  const auto vscale = hn::Set(df, scale);
  i = 0;
  for (; i + F <= n; i += F)
    hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(df, x + i), vscale), hn::LoadU(df, weight + i)), df, y + i);
  rms_apply(x, weight, y, i, n, scale);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(RmsNorm);

void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  HWY_DYNAMIC_DISPATCH(RmsNorm)(x, weight, y, n, eps);
}

}  // namespace nanoserve::kernels
#endif
