// attention_heads with Highway: each F16 cache row is widened to float vectors once and used
// by every query head of the group; exponentials with Highway's vector Exp. Same algorithm
// and order of steps as the reference, per head.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/cache_control.h>
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
// Cache rows are fetched this many positions ahead: a sequence's cache is usually out of the
// core's caches (other sequences and layers ran since), and its rows are strided (a row
// holds every KV head), which the hardware prefetchers follow poorly. 16, a whole block of
// the paged cache ahead (as far as RowAhead reaches), rather than 8: one thread's attention
// over 8 sequences of 2000 positions (bench/attention_bench) 37 -> 33 ms, 0.5B Q8_0 decode
// at 2048 positions faster in 3 of 3 alternating cycles.
constexpr int64_t kPrefetchRows = 16;

// Row `row` of a run of `count` rows, or past its end the matching row of the next run (a
// run before the last fills its block, so the next block has `count` rows too); null when
// there is none. Fetching ahead across the jump keeps the next block's first rows from
// missing (a decode step's sequence spans a block every 16 positions).
HWY_INLINE const uint16_t* RowAhead(const uint16_t* run, const uint16_t* next, int64_t count, int64_t row,
                                    int64_t stride) {
  if (row < count) return run + row * stride;
  if (next != nullptr && row - count < count) return next + (row - count) * stride;
  return nullptr;
}

// Prefetches the head_dim F16 values of n rows from `row` on (see RowAhead).
HWY_INLINE void PrefetchRows(const uint16_t* run, const uint16_t* next, int64_t count, int64_t row, int64_t n,
                             int64_t stride, int head_dim) {
  for (int64_t r = row; r < row + n; ++r) {
    const uint16_t* at = RowAhead(run, next, count, r, stride);
    if (at == nullptr) return;
    for (int i = 0; i < head_dim; i += 32) hwy::Prefetch(at + i);
  }
}

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
void RunScores(const float* q, int h0, int nh, const uint16_t* k_run, const uint16_t*, int64_t stride, int64_t first,
               int64_t count, int head_dim, int64_t n_kv, float scale, float* scores) {
  RunScoresOneByOne(q, h0, nh, k_run, stride, first, count, head_dim, n_kv, scale, scores);
}
#else
// scores[h * n_kv + p] = scale * q_h·k_p for heads [h0, h0 + nh) and the positions of one run,
// four positions at a time: their four sums per head reduce together.
void RunScores(const float* q, int h0, int nh, const uint16_t* k_run, const uint16_t* next_k, int64_t stride,
               int64_t first, int64_t count, int head_dim, int64_t n_kv, float scale, float* scores) {
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
    PrefetchRows(k_run, next_k, count, p + kPrefetchRows, 4, stride, head_dim);
    // A part tile computes zeros for its missing positions: the loops below stay fixed at four.
    for (int t = 0; t < 4; ++t)
      for (int i = 0; i < head_dim; i += N)
        hn::Store(t < np ? hn::PromoteTo(df, hn::LoadU(dh, k + (p + t) * stride + i)) : hn::Zero(df), df,
                  keys + t * head_dim + i);
    for (int j = 0; j < nh; ++j) {
      const float* qj = q + (h0 + j) * head_dim;
      hn::Vec<DF> acc0 = hn::Zero(df), acc1 = hn::Zero(df), acc2 = hn::Zero(df), acc3 = hn::Zero(df);
      for (int i = 0; i < head_dim; i += N) {
        const auto qv = hn::LoadU(df, qj + i);
        acc0 = hn::MulAdd(qv, hn::Load(df, keys + i), acc0);
        acc1 = hn::MulAdd(qv, hn::Load(df, keys + head_dim + i), acc1);
        acc2 = hn::MulAdd(qv, hn::Load(df, keys + 2 * head_dim + i), acc2);
        acc3 = hn::MulAdd(qv, hn::Load(df, keys + 3 * head_dim + i), acc3);
      }
      const auto dots = hn::Mul(LaneSums4(df, acc0, acc1, acc2, acc3), hn::Set(d4, scale));
      float* out = scores + (h0 + j) * n_kv + first + p;
      if (np == 4) hn::StoreU(dots, d4, out);
      else {
        alignas(16) float part[4];
        hn::Store(dots, d4, part);
        for (int t = 0; t < np; ++t) out[t] = part[t];
      }
    }
  }
}
#endif

// out_h += w_h[p] * v_p for heads [h0, h0 + nh) and the positions of one run. Slice by slice
// of head_dim, the heads' sums stay in registers over every position (the same steps, in the
// same order, as adding into out position by position).
void RunValues(const float* weights, int h0, int nh, const uint16_t* v_run, const uint16_t* next_v, int64_t stride,
               int64_t first, int64_t count, int head_dim, int64_t n_kv, float* out) {
  const DF df;
  const DH dh;
  const int N = static_cast<int>(hn::Lanes(df));
  const int vec_end = head_dim / N * N;
  const auto* v = reinterpret_cast<const hwy::float16_t*>(v_run);
  const float* w = weights + first;
  int i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Two slices at once where 32 registers hold their sums: twice the independent chains, so
  // the multiply-adds do not wait on each other's latency.
  for (; i + 2 * N <= vec_end; i += 2 * N) {
    hn::Vec<DF> acc[kHeadBatch], acc2[kHeadBatch];
    for (int j = 0; j < nh; ++j) {
      acc[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i);
      acc2[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i + N);
    }
    for (int64_t p = 0; p < count; ++p) {
      if (const uint16_t* ahead = RowAhead(v_run, next_v, count, p + kPrefetchRows, stride)) hwy::Prefetch(ahead + i);
      const auto vv = hn::PromoteTo(df, hn::LoadU(dh, v + p * stride + i));  // widened once for every head
      const auto vv2 = hn::PromoteTo(df, hn::LoadU(dh, v + p * stride + i + N));
      for (int j = 0; j < nh; ++j) {
        const auto wj = hn::Set(df, w[(h0 + j) * n_kv + p]);
        acc[j] = hn::MulAdd(wj, vv, acc[j]);
        acc2[j] = hn::MulAdd(wj, vv2, acc2[j]);
      }
    }
    for (int j = 0; j < nh; ++j) {
      hn::StoreU(acc[j], df, out + (h0 + j) * head_dim + i);
      hn::StoreU(acc2[j], df, out + (h0 + j) * head_dim + i + N);
    }
  }
#endif
  for (; i < vec_end; i += N) {
    hn::Vec<DF> acc[kHeadBatch];
    for (int j = 0; j < nh; ++j) acc[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i);
    for (int64_t p = 0; p < count; ++p) {
      if (const uint16_t* ahead = RowAhead(v_run, next_v, count, p + kPrefetchRows, stride)) hwy::Prefetch(ahead + i);
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
  auto vmax = hn::Set(df, -INFINITY);
  int64_t p = 0;
  for (; p + N <= n; p += N) vmax = hn::Max(vmax, hn::LoadU(df, scores + p));
  float max = hn::GetLane(hn::MaxOfLanes(df, vmax));
  for (; p < n; ++p) max = std::max(max, scores[p]);
  vmax = hn::Set(df, max);
  auto vsum = hn::Zero(df);
  p = 0;
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
  // The view moved to this KV head's slice of every cache row: each run, and the run after
  // it, then starts at the head's values.
  KvView head = kv;
  head.k += static_cast<int64_t>(kv_head) * head_dim;
  head.v += static_cast<int64_t>(kv_head) * head_dim;
  for (int h0 = 0; h0 < n_q; h0 += kHeadBatch) {
    const int nh = std::min(kHeadBatch, n_q - h0);
    for_each_kv_run(head, n_kv, [&](const KvRun& run) {
      RunScores(q, h0, nh, run.k, run.next_k, kv.stride, run.first, run.count, head_dim, n_kv, scale, scores);
    });
  }
  std::fill(out, out + static_cast<int64_t>(n_q) * head_dim, 0.0f);
  float inv_sum[kHeadBatch];
  for (int h0 = 0; h0 < n_q; h0 += kHeadBatch) {
    const int nh = std::min(kHeadBatch, n_q - h0);
    for (int j = 0; j < nh; ++j) inv_sum[j] = static_cast<float>(1.0 / SoftmaxNumerators(scores + (h0 + j) * n_kv, n_kv));
    for_each_kv_run(head, n_kv, [&](const KvRun& run) {
      RunValues(scores, h0, nh, run.v, run.next_v, kv.stride, run.first, run.count, head_dim, n_kv, out);
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
