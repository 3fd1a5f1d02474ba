// attention_heads with Highway: each F16 cache row is widened to float vectors once and used
// by every query head of the group; exponentials with Highway's vector Exp. Same algorithm
// and order of steps as the reference, per head.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/lane_sums-inl.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DH = hn::Rebind<hwy::float16_t, DF>;
constexpr int kHeadBatch = 8;  // query heads whose dot products share one pass over a key row

// scores for head dims that are not a multiple of the vector or above 256, or vectors under
// 4 lanes: one position at a time, each key row widened once for every head.
void RunScoresOneByOne(const float* q, int h0, int nh, const uint16_t* k_run, int64_t stride, int64_t first,
                       int64_t count, int head_dim, int64_t n_kv, float scale, float* scores) {
  const DF df;
  const DH dh;
  const int N = static_cast<int>(hn::Lanes(df));
  const int vec_end = head_dim / N * N;
  for (int64_t p = 0; p < count; ++p) {
    const uint16_t* k_bits = k_run + p * stride;
    const auto* k = reinterpret_cast<const hwy::float16_t*>(k_bits);
    hn::Vec<DF> acc[kHeadBatch];
    for (int j = 0; j < nh; ++j) acc[j] = hn::Zero(df);
    for (int i = 0; i < vec_end; i += N) {
      const auto kv = hn::PromoteTo(df, hn::LoadU(dh, k + i));  // widened once for every head
      for (int j = 0; j < nh; ++j) acc[j] = hn::MulAdd(hn::LoadU(df, q + (h0 + j) * head_dim + i), kv, acc[j]);
    }
    for (int j = 0; j < nh; ++j) {
      float dot = hn::GetLane(hn::SumOfLanes(df, acc[j]));
      for (int i = vec_end; i < head_dim; ++i) dot += q[(h0 + j) * head_dim + i] * tensor::f16_to_f32(k_bits[i]);
      scores[(h0 + j) * n_kv + first + p] = dot * scale;
    }
  }
}

#if HWY_TARGET == HWY_SCALAR
void RunScores(const float* q, int h0, int nh, const uint16_t* k_run, int64_t stride, int64_t first, int64_t count,
               int head_dim, int64_t n_kv, float scale, float* scores) {
  RunScoresOneByOne(q, h0, nh, k_run, stride, first, count, head_dim, n_kv, scale, scores);
}
#else
// scores[h * n_kv + p] = scale * q_h·k_p for heads [h0, h0 + nh) and the positions of one run,
// four positions at a time: their four sums per head reduce together.
void RunScores(const float* q, int h0, int nh, const uint16_t* k_run, int64_t stride, int64_t first, int64_t count,
               int head_dim, int64_t n_kv, float scale, float* scores) {
  const DF df;
  const DH dh;
  const int N = static_cast<int>(hn::Lanes(df));
  constexpr int kMaxHeadDim = 256;
  if (N < 4 || head_dim % N != 0 || head_dim > kMaxHeadDim)
    return RunScoresOneByOne(q, h0, nh, k_run, stride, first, count, head_dim, n_kv, scale, scores);
  const auto* k = reinterpret_cast<const hwy::float16_t*>(k_run);
  const hn::Full128<float> d4;
  HWY_ALIGN float keys[4 * kMaxHeadDim];  // the tile's key rows, widened once for every head
  for (int64_t p = 0; p < count; p += 4) {
    const int np = static_cast<int>(std::min<int64_t>(4, count - p));
    for (int t = 0; t < np; ++t)
      for (int i = 0; i < head_dim; i += N)
        hn::Store(hn::PromoteTo(df, hn::LoadU(dh, k + (p + t) * stride + i)), df, keys + t * head_dim + i);
    for (int j = 0; j < nh; ++j) {
      const float* qj = q + (h0 + j) * head_dim;
      hn::Vec<DF> acc[4] = {hn::Zero(df), hn::Zero(df), hn::Zero(df), hn::Zero(df)};
      for (int i = 0; i < head_dim; i += N) {
        const auto qv = hn::LoadU(df, qj + i);
        for (int t = 0; t < np; ++t) acc[t] = hn::MulAdd(qv, hn::Load(df, keys + t * head_dim + i), acc[t]);
      }
      alignas(16) float dots[4];
      hn::Store(hn::Mul(LaneSums4(df, acc[0], acc[1], acc[2], acc[3]), hn::Set(d4, scale)), d4, dots);
      for (int t = 0; t < np; ++t) scores[(h0 + j) * n_kv + first + p + t] = dots[t];
    }
  }
}
#endif

// out_h += w_h[p] * v_p for heads [h0, h0 + nh) and the positions of one run. Slice by slice
// of head_dim, the heads' sums stay in registers over every position (the same steps, in the
// same order, as adding into out position by position).
void RunValues(const float* weights, int h0, int nh, const uint16_t* v_run, int64_t stride, int64_t first,
               int64_t count, int head_dim, int64_t n_kv, float* out) {
  const DF df;
  const DH dh;
  const int N = static_cast<int>(hn::Lanes(df));
  const int vec_end = head_dim / N * N;
  const auto* v = reinterpret_cast<const hwy::float16_t*>(v_run);
  const float* w = weights + first;
  for (int i = 0; i < vec_end; i += N) {
    hn::Vec<DF> acc[kHeadBatch];
    for (int j = 0; j < nh; ++j) acc[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i);
    for (int64_t p = 0; p < count; ++p) {
      const auto vv = hn::PromoteTo(df, hn::LoadU(dh, v + p * stride + i));  // widened once for every head
      for (int j = 0; j < nh; ++j) acc[j] = hn::MulAdd(hn::Set(df, w[(h0 + j) * n_kv + p]), vv, acc[j]);
    }
    for (int j = 0; j < nh; ++j) hn::StoreU(acc[j], df, out + (h0 + j) * head_dim + i);
  }
  for (int64_t p = 0; p < count; ++p) {
    const uint16_t* v_bits = v_run + p * stride;
    for (int j = 0; j < nh; ++j)
      for (int i = vec_end; i < head_dim; ++i)
        out[(h0 + j) * head_dim + i] += w[(h0 + j) * n_kv + p] * tensor::f16_to_f32(v_bits[i]);
  }
}

// Replaces scores[0, n) by exp(scores - max) and returns their sum.
double SoftmaxNumerators(float* scores, int64_t n) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  float max = -INFINITY;
  for (int64_t p = 0; p < n; ++p) max = std::max(max, scores[p]);
  const auto vmax = hn::Set(df, max);
  auto vsum = hn::Zero(df);
  int64_t p = 0;
  for (; p + N <= n; p += N) {
    const auto e = hn::Exp(df, hn::Sub(hn::LoadU(df, scores + p), vmax));
    hn::StoreU(e, df, scores + p);
    vsum = hn::Add(vsum, e);
  }
  double sum = hn::GetLane(hn::SumOfLanes(df, vsum));
  for (; p < n; ++p) sum += scores[p] = std::exp(scores[p] - max);
  return sum;
}

void AttentionHeads(const float* q, int n_q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                    float* scores, float* out) {
  const int64_t offset = static_cast<int64_t>(kv_head) * head_dim;
  for (int h0 = 0; h0 < n_q; h0 += kHeadBatch) {
    const int nh = std::min(kHeadBatch, n_q - h0);
    for_each_kv_run(kv, n_kv, [&](int64_t first, int64_t count, const uint16_t* k_run, const uint16_t*) {
      RunScores(q, h0, nh, k_run + offset, kv.stride, first, count, head_dim, n_kv, scale, scores);
    });
  }
  std::fill(out, out + static_cast<int64_t>(n_q) * head_dim, 0.0f);
  float inv_sum[kHeadBatch];
  for (int h0 = 0; h0 < n_q; h0 += kHeadBatch) {
    const int nh = std::min(kHeadBatch, n_q - h0);
    for (int j = 0; j < nh; ++j) inv_sum[j] = static_cast<float>(1.0 / SoftmaxNumerators(scores + (h0 + j) * n_kv, n_kv));
    for_each_kv_run(kv, n_kv, [&](int64_t first, int64_t count, const uint16_t*, const uint16_t* v_run) {
      RunValues(scores, h0, nh, v_run + offset, kv.stride, first, count, head_dim, n_kv, out);
    });
    for (int j = 0; j < nh; ++j)
      for (int i = 0; i < head_dim; ++i) out[(h0 + j) * head_dim + i] *= inv_sum[j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(AttentionHeads);

void attention_heads(const float* q, int n_q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                     float* scores, float* out) {
  HWY_DYNAMIC_DISPATCH(AttentionHeads)(q, n_q, kv, kv_head, head_dim, n_kv, scale, scores, out);
}

}  // namespace nanoserve::kernels
#endif
