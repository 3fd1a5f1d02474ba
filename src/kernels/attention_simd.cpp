// attention_head with Highway: the q·k dot products and the weighted sum of values widen
// the F16 cache rows to float vectors. Same algorithm and order of steps as the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// q · k over n elements, k in F16.
float DotF16(const float* q, const uint16_t* k_bits, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto* k = reinterpret_cast<const hwy::float16_t*>(k_bits);
  auto sum = hn::Zero(df);
  int64_t i = 0;
  for (; i + N <= n; i += N) sum = hn::MulAdd(hn::LoadU(df, q + i), hn::PromoteTo(df, hn::LoadU(dh, k + i)), sum);
  float s = hn::GetLane(hn::SumOfLanes(df, sum));
  for (; i < n; ++i) s += q[i] * tensor::f16_to_f32(k_bits[i]);
  return s;
}

// out += w * v over n elements, v in F16.
void AddScaledF16(float* out, float w, const uint16_t* v_bits, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto* v = reinterpret_cast<const hwy::float16_t*>(v_bits);
  const auto wv = hn::Set(df, w);
  int64_t i = 0;
  for (; i + N <= n; i += N)
    hn::StoreU(hn::MulAdd(wv, hn::PromoteTo(df, hn::LoadU(dh, v + i)), hn::LoadU(df, out + i)), df, out + i);
  for (; i < n; ++i) out[i] += w * tensor::f16_to_f32(v_bits[i]);
}

void AttentionHead(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                   float* scores, float* out) {
  const int64_t offset = static_cast<int64_t>(kv_head) * head_dim;
  float max = -INFINITY;
  for_each_kv_run(kv, n_kv, [&](int64_t first, int64_t count, const uint16_t* k_run, const uint16_t*) {
    for (int64_t p = 0; p < count; ++p) {
      scores[first + p] = DotF16(q, k_run + p * kv.stride + offset, head_dim) * scale;
      max = std::max(max, scores[first + p]);
    }
  });
  std::fill(out, out + head_dim, 0.0f);
  double sum = 0.0;
  for_each_kv_run(kv, n_kv, [&](int64_t first, int64_t count, const uint16_t*, const uint16_t* v_run) {
    for (int64_t p = 0; p < count; ++p) {
      const float weight = std::exp(scores[first + p] - max);
      sum += weight;
      AddScaledF16(out, weight, v_run + p * kv.stride + offset, head_dim);
    }
  });
  const float inv = static_cast<float>(1.0 / sum);
  for (int i = 0; i < head_dim; ++i) out[i] *= inv;
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(AttentionHead);

void attention_head(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                    float* scores, float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionHead)(q, kv, kv_head, head_dim, n_kv, scale, scores, out);
}

}  // namespace nanoserve::kernels
#endif
