// attention_heads with Highway: each row of an F16 cache (a key dimension's row of a block's
// transposed key tile, a position's value row) is made float vectors once and used by every
// query head of the group; a Q8_0 cache's keys are scored and its values summed by integer dot
// products (q8_key_scores-inl.h, q8_value_sums-inl.h); exponentials with Highway's vector Exp.
// Same algorithm and order of steps as the reference, per head.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention.h"
#include "kernels/prefetch-inl.h"
#include "kernels/q8_key_scores-inl.h"
#include "kernels/q8_value_sums-inl.h"
#include "kernels/scratch.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DH = hn::Rebind<hwy::float16_t, DF>;
// Chains of a head's score sums: two where a row's group of heads is small (enough
// multiply-adds in flight), else one; by the group alone, so that a head's sums are the same
// whatever rows share its pass.
constexpr int ChainsFor(int heads_per_row) { return heads_per_row <= 4 ? 2 : 1; }
// Sums a pass over the keys keeps in registers: a sum (a chain of a head's dot products) a
// vector, beside the key row and a query's broadcast; 16 where there are 32 vector registers
// (AVX-512, NEON, SVE), 8 in the 16 of the other x86 targets.
constexpr int kScoreSums = !HWY_ARCH_X86 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL ? 16 : 8;
constexpr int kValueHeads = 8;  // query heads whose weighted values share one pass over the cache
// Each block's tiles are fetched while the kernels work on the block before it (a sequence's
// cache is usually out of the core's caches: other sequences and layers ran since; and where
// sequences share the pool, a sequence's blocks lie anywhere in it, where no hardware
// prefetcher looks). One block ahead is enough: fetching 3-4 ahead made no difference
// (experiments/kernel-notes.md). (PrefetchUntil, prefetch-inl.h.)

// A block's F16 tile of keys or values as float vectors and floats (KvView): Key(d, t0) the
// lanes [t0, t0 + N) of key dimension d's row; Value(p, i) position p's values [i, i + N);
// KeyAt and ValueAt one at a time. (A Q8_0 cache's keys are scored in q8_key_scores-inl.h, its
// values summed in q8_value_sums-inl.h.)
struct F16Tile {
  const uint16_t* x;
  int64_t block_size;
  int head_dim;
  F16Tile(const uint8_t* tile, int64_t bs, int hd)
      : x(reinterpret_cast<const uint16_t*>(tile)), block_size(bs), head_dim(hd) {}
  HWY_INLINE hn::Vec<DF> Key(int d, int64_t t0) const { return Widen(x + d * block_size + t0); }
  HWY_INLINE hn::Vec<DF> Value(int64_t p, int i) const { return Widen(x + p * head_dim + i); }
  float KeyAt(int d, int64_t t) const { return tensor::f16_to_f32(x[d * block_size + t]); }
  float ValueAt(int64_t p, int i) const { return tensor::f16_to_f32(x[p * head_dim + i]); }
  static HWY_INLINE hn::Vec<DF> Widen(const uint16_t* at) {
    return hn::PromoteTo(DF(), hn::LoadU(DH(), reinterpret_cast<const hwy::float16_t*>(at)));
  }
};

// One position's score in scalar code, in the steps each lane of ScoresVector takes: the
// dimensions' products summed in order, in kChains interleaved chains (chain c takes the
// dimensions d with d % kChains == c) added at the end. t: the position's slot in the block.
template <int kChains>
float ScoreOf(const float* q, const F16Tile& tile, int64_t t, int head_dim) {
  float sum[kChains] = {};
  for (int d = 0; d < head_dim; ++d) sum[d % kChains] = std::fma(q[d], tile.KeyAt(d, t), sum[d % kChains]);
  float total = sum[0];
  for (int c = 1; c < kChains; ++c) total += sum[c];
  return total;
}

// scores[j * stride + t] = scale * q_j·k_t (out: the pass's first head's score of position t0)
// for the pass's NH heads and the positions [t0, t0 + nt) of one block, one position a lane:
// each key dimension's row of the tile is made float once and multiplied into every head's
// sums. qt holds the pass's queries dimension by dimension (qt[d * NH + j]: one pointer for
// every head's broadcasts; with a pointer per head, the AVX-512 kernel ran out of general
// registers and moved them through vector registers in the loop). The vector reads the tile's
// row from t0 on, past the block's count where it is part-filled (the slots exist; their lanes
// are never stored). next_k, when not null, is the next block's tile (row_bytes a dimension),
// asked for line by line as the dimensions go by.
template <int kChains, int NH>
void ScoresVector(const float* qt, const F16Tile& tile, const uint8_t* next_k, int64_t row_bytes, int64_t t0, int nt,
                  int head_dim, int64_t stride, float scale, float* out) {
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  const uint8_t* cursor = next_k;
  static_assert(kChains == 1 || kChains == 2);
  // Chain c takes the dimensions d with d % kChains == c: the loop steps kChains dimensions at
  // a time, with no branch on d (a branch in the loop made GCC keep the sums in memory and
  // zero them with rep stos on every call).
  hn::Vec<DF> acc0[NH], acc1[NH];
  HWY_UNROLL(16)
  for (int j = 0; j < NH; ++j) acc0[j] = acc1[j] = hn::Zero(df);
  int d = 0;
  for (; d + kChains <= head_dim; d += kChains) {
    if (next_k != nullptr) PrefetchUntil(next_k, (d + kChains) * row_bytes, cursor);  // as far as its row d
    const auto k0 = tile.Key(d, t0);  // made float once for every head
    const float* q0 = qt + d * NH;
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) acc0[j] = hn::MulAdd(hn::Set(df, q0[j]), k0, acc0[j]);
    if constexpr (kChains == 2) {
      const auto k1 = tile.Key(d + 1, t0);
      HWY_UNROLL(16)
      for (int j = 0; j < NH; ++j) acc1[j] = hn::MulAdd(hn::Set(df, q0[NH + j]), k1, acc1[j]);
    }
  }
  if (d < head_dim) {  // an odd head_dim's last dimension: chain 0's
    if (next_k != nullptr) PrefetchUntil(next_k, head_dim * row_bytes, cursor);
    const auto k0 = tile.Key(d, t0);
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) acc0[j] = hn::MulAdd(hn::Set(df, qt[d * NH + j]), k0, acc0[j]);
  }
  HWY_ALIGN float part[hn::MaxLanes(df)];
  HWY_UNROLL(16)
  for (int j = 0; j < NH; ++j) {
    auto chains = acc0[j];
    if constexpr (kChains == 2) chains = hn::Add(chains, acc1[j]);
    const auto sum = hn::Mul(chains, hn::Set(df, scale));
    if (nt == N) {
      hn::StoreU(sum, df, out + j * stride);
    } else {
      hn::Store(sum, df, part);
      std::copy(part, part + nt, out + j * stride);
    }
  }
}

// ScoresVector with the head count nh (1 to kScoreSums / kChains) as a template argument, so
// that the sums stay in registers.
template <int kChains, int NH = 1>
void ScoresVectorOf(int nh, const float* qt, const F16Tile& tile, const uint8_t* next_k, int64_t row_bytes, int64_t t0,
                    int nt, int head_dim, int64_t stride, float scale, float* out) {
  if constexpr (NH < kScoreSums / kChains) {
    if (nh > NH)
      return ScoresVectorOf<kChains, NH + 1>(nh, qt, tile, next_k, row_bytes, t0, nt, head_dim, stride, scale, out);
  }
  ScoresVector<kChains, NH>(qt, tile, next_k, row_bytes, t0, nt, head_dim, stride, scale, out);
}

// scores for heads [h0, h0 + nh) (at most kScoreSums / kChains) and the positions of one block
// (KvRun: its key tile, this KV head's). Positions past the last whole vector that fits in the
// block's rows (only where a block is narrower than a vector) go one by one, in the same steps.
template <int kChains>
void RunScores(const float* q, const float* qt, int h0, int nh, const KvView& head, const KvRun& run, int head_dim,
               int64_t stride, float scale, float* scores) {
  const int N = static_cast<int>(hn::Lanes(DF()));
  const F16Tile tile(run.k, head.block_size, head_dim);
  const int64_t row_bytes = kv_tile_bytes(KvType::F16, head_dim, head.block_size) / head_dim;
  int64_t t0 = 0;
  for (; t0 < run.count && t0 + N <= head.block_size; t0 += N) {
    const int nt = static_cast<int>(std::min<int64_t>(N, run.count - t0));
    ScoresVectorOf<kChains>(nh, qt, tile, t0 == 0 ? run.next_k : nullptr, row_bytes, t0, nt, head_dim, stride, scale,
                            scores + h0 * stride + run.first + t0);
  }
  for (; t0 < run.count; ++t0)
    for (int j = 0; j < nh; ++j)
      scores[(h0 + j) * stride + run.first + t0] =
          ScoreOf<kChains>(q + (h0 + j) * head_dim, tile, t0, head_dim) * scale;
}

// Scores of every head over the positions its row sees from the block that holds `from` (and,
// for the earlier rows of a pass, the few after: never read), in passes of kScoreSums / kChains
// heads.
template <int kChains>
void Scores(const float* q, int n_rows, int heads_per_row, const KvView& head, int head_dim, int64_t from,
            int64_t n_kv, float scale, int64_t stride, float* scores) {
  constexpr int kBatch = kScoreSums / kChains;
  const int n_q = n_rows * heads_per_row;
  thread_local std::vector<float> qt;  // a pass's queries, dimension by dimension (ScoresVector)
  grow(qt, static_cast<size_t>(kBatch) * head_dim);
  for (int h0 = 0; h0 < n_q; h0 += kBatch) {
    const int nh = std::min(kBatch, n_q - h0);
    for (int d = 0; d < head_dim; ++d)
      for (int j = 0; j < nh; ++j) qt[d * nh + j] = q[(h0 + j) * head_dim + d];
    const int64_t until = n_kv + (h0 + nh - 1) / heads_per_row;  // the pass's last row's positions
    for_each_kv_run(head, from, until, [&](const KvRun& run) {
      RunScores<kChains>(q, qt.data(), h0, nh, head, run, head_dim, stride, scale, scores);
    });
  }
}

// out_j += w_j[p] * v_p for the pass's NH heads (out: its first head's; w_j = w + j * w_stride)
// and the positions [0, count) of one block's F16 value tile. Slice by slice of head_dim, the
// heads' sums stay in registers over every position (the same steps, in the same order, as
// adding into out position by position). next_v, when not null, is the next block's tile
// (tile_bytes long), asked for at once: a cursor through it in the loop took the general
// registers that the heads' weights need (GCC then moved them through vector registers).
template <int NH>
void RunValuesOf(const float* w, int64_t w_stride, const F16Tile& values, const uint8_t* next_v, int64_t tile_bytes,
                 int64_t count, int head_dim, float* out) {
  if (next_v != nullptr) {
    const uint8_t* cursor = next_v;
    PrefetchUntil(next_v, tile_bytes, cursor);
  }
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  const int vec_end = head_dim / N * N;
  int i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Two slices at once where 32 registers hold their sums: twice the independent chains, so
  // the multiply-adds do not wait on each other's latency.
  for (; i + 2 * N <= vec_end; i += 2 * N) {
    hn::Vec<DF> acc[NH], acc2[NH];
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) {
      acc[j] = hn::LoadU(df, out + j * head_dim + i);
      acc2[j] = hn::LoadU(df, out + j * head_dim + i + N);
    }
    for (int64_t p = 0; p < count; ++p) {
      const auto vv = values.Value(p, i);  // made float once for every head
      const auto vv2 = values.Value(p, i + N);
      HWY_UNROLL(16)
      for (int j = 0; j < NH; ++j) {
        const auto wj = hn::Set(df, w[j * w_stride + p]);
        acc[j] = hn::MulAdd(wj, vv, acc[j]);
        acc2[j] = hn::MulAdd(wj, vv2, acc2[j]);
      }
    }
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) {
      hn::StoreU(acc[j], df, out + j * head_dim + i);
      hn::StoreU(acc2[j], df, out + j * head_dim + i + N);
    }
  }
#endif
  for (; i < vec_end; i += N) {
    hn::Vec<DF> acc[NH];
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) acc[j] = hn::LoadU(df, out + j * head_dim + i);
    for (int64_t p = 0; p < count; ++p) {
      const auto vv = values.Value(p, i);  // made float once for every head
      HWY_UNROLL(16)
      for (int j = 0; j < NH; ++j) acc[j] = hn::MulAdd(hn::Set(df, w[j * w_stride + p]), vv, acc[j]);
    }
    HWY_UNROLL(16)
    for (int j = 0; j < NH; ++j) hn::StoreU(acc[j], df, out + j * head_dim + i);
  }
  for (int64_t p = 0; p < count; ++p)
    for (int j = 0; j < NH; ++j)
      for (int i = vec_end; i < head_dim; ++i) out[j * head_dim + i] += w[j * w_stride + p] * values.ValueAt(p, i);
}

// RunValuesOf with the head count nh (1 to kValueHeads) as a template argument, so that the
// sums stay in registers.
template <int NH = 1>
void RunValues(int nh, const float* w, int64_t w_stride, const F16Tile& tile, const uint8_t* next_v,
               int64_t tile_bytes, int64_t count, int head_dim, float* out) {
  if constexpr (NH < kValueHeads) {
    if (nh > NH) return RunValues<NH + 1>(nh, w, w_stride, tile, next_v, tile_bytes, count, head_dim, out);
  }
  RunValuesOf<NH>(w, w_stride, tile, next_v, tile_bytes, count, head_dim, out);
}

// Replaces scores[0, n) by exp(scores - max) and returns their sum, plus exp(sink - max) where
// there is a sink (max then counts it too; -infinity: none, and the same steps as without).
double SoftmaxNumerators(float* scores, int64_t n, float sink) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto vmax = hn::Set(df, -INFINITY);
  int64_t p = 0;
  for (; p + N <= n; p += N) vmax = hn::Max(vmax, hn::LoadU(df, scores + p));
  float max = hn::GetLane(hn::MaxOfLanes(df, vmax));
  for (; p < n; ++p) max = std::max(max, scores[p]);
  const bool has_sink = sink != -INFINITY;
  if (has_sink) max = std::max(max, sink);
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
  if (has_sink) sum += std::exp(sink - max);
  return sum;
}

template <KvType kType>
void AttentionHeadsOf(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                      int64_t n_kv, float scale, float* scores, float* out, int64_t window, const float* sinks) {
  const KvView head = kv_head_view(kv, kv_head);
  const int n_q = n_rows * heads_per_row;
  const int64_t stride = n_kv + n_rows - 1;  // the last row's positions
  const int64_t tile_bytes = kv_tile_bytes(kType, head_dim, head.block_size);
  // Positions from the block that holds the first row's window start (every row's window lies
  // past it). Where a block is whole vectors, a lane of the softmax's sums takes the same
  // positions as from 0 plus zeros: skipping the blocks changes no bit.
  const int64_t lo = window_start(n_kv, window) / head.block_size * head.block_size;
  if constexpr (kType == KvType::Q8_0) {
    q8k::Scores(q, n_rows, heads_per_row, head, head_dim, lo, n_kv, scale, stride, scores);
  } else if (ChainsFor(heads_per_row) == 2) {
    Scores<2>(q, n_rows, heads_per_row, head, head_dim, lo, n_kv, scale, stride, scores);
  } else {
    Scores<1>(q, n_rows, heads_per_row, head, head_dim, lo, n_kv, scale, stride, scores);
  }
  // Positions before a row's window weigh exp(-inf) = 0 (Exp is 0 below its range).
  for (int h = 0; h < n_q; ++h)
    std::fill(scores + h * stride + lo, scores + h * stride + window_start(n_kv + h / heads_per_row, window),
              -INFINITY);
  std::fill(out, out + static_cast<int64_t>(n_q) * head_dim, 0.0f);
  float inv_sum[kValueHeads];
  for (int h0 = 0; h0 < n_q; h0 += kValueHeads) {
    const int nh = std::min(kValueHeads, n_q - h0);
    const int64_t last = n_kv + (h0 + nh - 1) / heads_per_row;  // the pass's last row's positions
    for (int j = 0; j < nh; ++j) {
      const int64_t sees = n_kv + (h0 + j) / heads_per_row;  // its row's positions
      float* w = scores + (h0 + j) * stride;
      const float sink = sinks ? sinks[(h0 + j) % heads_per_row] : -INFINITY;
      inv_sum[j] = static_cast<float>(1.0 / SoftmaxNumerators(w + lo, sees - lo, sink));
      std::fill(w + sees, w + last, 0.0f);  // what a later row sees weighs 0 for this one
    }
    // Every head of the pass over the positions of its last row: a head's sums go over its
    // positions in the order they would alone (an F16 sum adds exact zeros past its row; a Q8_0
    // chunk's scale is its largest weight, which zeros do not change).
    if constexpr (kType == KvType::Q8_0) {
      q8v::Values(nh, scores + h0 * stride, stride, head, lo, last, head_dim, out + h0 * head_dim);
    } else {
      for_each_kv_run(head, lo, last, [&](const KvRun& run) {
        RunValues(nh, scores + h0 * stride + run.first, stride, F16Tile(run.v, head.block_size, head_dim), run.next_v,
                  tile_bytes, run.count, head_dim, out + h0 * head_dim);
      });
    }
    for (int j = 0; j < nh; ++j)
      for (int i = 0; i < head_dim; ++i) out[(h0 + j) * head_dim + i] *= inv_sum[j];
  }
}

void AttentionHeads(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                    int64_t n_kv, float scale, float* scores, float* out, int64_t window, const float* sinks) {
  if (kv.type == KvType::F16)
    return AttentionHeadsOf<KvType::F16>(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                         window, sinks);
  // A block of 32 dimensions must be whole vectors of the values' sums (else: the reference).
  if (hn::Lanes(DF()) * q8v::kVectors != static_cast<size_t>(kKvQ8Block))
    return attention_heads_reference(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                     window, sinks);
  AttentionHeadsOf<KvType::Q8_0>(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out, window,
                                 sinks);
}

int RowsPerPass(int heads_per_row, KvType type) {
  const int heads = type == KvType::Q8_0 ? q8k::kHeads : kScoreSums / ChainsFor(heads_per_row);
  return std::max(1, heads / std::max(1, heads_per_row));
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(AttentionHeads);
HWY_EXPORT(RowsPerPass);

int attention_rows_per_pass(int heads_per_row, KvType type) {
  return HWY_DYNAMIC_DISPATCH(RowsPerPass)(heads_per_row, type);
}

void attention_heads(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                     int64_t n_kv, float scale, float* scores, float* out, int64_t window, const float* sinks) {
  HWY_DYNAMIC_DISPATCH(AttentionHeads)(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                       window, sinks);
}

}  // namespace nanoserve::kernels
#endif
