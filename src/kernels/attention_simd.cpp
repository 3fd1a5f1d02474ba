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

#include "kernels/attention.h"
#include "kernels/prefetch-inl.h"
#include "kernels/q8_key_scores-inl.h"
#include "kernels/q8_value_sums-inl.h"
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
// prefetcher looks). Fetching 3-4 blocks ahead instead made no difference, with blocks apart
// (the 1.7B shape's decode attention at 1050 positions, 300-360 µs a layer either way;
// bench/attention_bench even) and in runs (0.5B after 512 positions, 1.7B after 1024).
// (PrefetchUntil, prefetch-inl.h.)

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

// scores[h * stride + first + t] = scale * q_h·k_t for heads [h0, h0 + nh) and the positions
// [t0, t0 + nt) of one block, one position a lane: each key dimension's row of the tile is
// made float once and multiplied into every head's sums. The vector reads the tile's row from
// t0 on, past the block's count where it is part-filled (the slots exist; their lanes are never
// stored). next_k, when not null, is the next block's tile (tile_bytes long), asked for line by
// line as the dimensions go by.
template <int kChains, int NH>
void ScoresVector(const float* q, int h0, const F16Tile& tile, const uint8_t* next_k, int64_t tile_bytes, int64_t first,
                  int64_t t0, int nt, int head_dim, int64_t stride, float scale, float* scores) {
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  const uint8_t* cursor = next_k;
  const int64_t row_bytes = tile_bytes / head_dim;  // a dimension's share of the tile (once: no division per row)
  static_assert(kChains == 1 || kChains == 2);
  // Dimension d into chain d % kChains, in one loop: with the step as a helper taking a chain's
  // array by reference, GCC zeroed a stack copy of both arrays on every call (7% of a decode
  // step's attention at 350 positions, bench/attention_bench).
  constexpr int kOdd = kChains == 2 ? NH : 1;  // the second chain's sums, where there is one
  hn::Vec<DF> acc0[NH], acc1[kOdd];
  for (int j = 0; j < NH; ++j) acc0[j] = hn::Zero(df);
  for (int j = 0; j < kOdd; ++j) acc1[j] = hn::Zero(df);
  for (int d = 0; d < head_dim; ++d) {
    if (next_k != nullptr) PrefetchUntil(next_k, (d + 1) * row_bytes, cursor);  // as far as its row d
    const auto kd = tile.Key(d, t0);  // made float once for every head
    if constexpr (kChains == 2) {
      if (d % 2 == 1) {
        for (int j = 0; j < NH; ++j) acc1[j] = hn::MulAdd(hn::Set(df, q[(h0 + j) * head_dim + d]), kd, acc1[j]);
        continue;
      }
    }
    for (int j = 0; j < NH; ++j) acc0[j] = hn::MulAdd(hn::Set(df, q[(h0 + j) * head_dim + d]), kd, acc0[j]);
  }
  HWY_ALIGN float part[hn::MaxLanes(df)];
  for (int j = 0; j < NH; ++j) {
    auto chains = acc0[j];
    if constexpr (kChains == 2) chains = hn::Add(chains, acc1[j]);
    const auto sum = hn::Mul(chains, hn::Set(df, scale));
    float* out = scores + (h0 + j) * stride + first + t0;
    if (nt == N) {
      hn::StoreU(sum, df, out);
    } else {
      hn::Store(sum, df, part);
      std::copy(part, part + nt, out);
    }
  }
}

// ScoresVector with the head count nh (1 to kScoreSums / kChains) as a template argument, so
// that the sums stay in registers.
template <int kChains, int NH = 1>
void ScoresVectorOf(int nh, const float* q, int h0, const F16Tile& tile, const uint8_t* next_k, int64_t tile_bytes,
                    int64_t first, int64_t t0, int nt, int head_dim, int64_t stride, float scale, float* scores) {
  if constexpr (NH < kScoreSums / kChains) {
    if (nh > NH)
      return ScoresVectorOf<kChains, NH + 1>(nh, q, h0, tile, next_k, tile_bytes, first, t0, nt, head_dim, stride,
                                             scale, scores);
  }
  ScoresVector<kChains, NH>(q, h0, tile, next_k, tile_bytes, first, t0, nt, head_dim, stride, scale, scores);
}

// scores for heads [h0, h0 + nh) (at most kScoreSums / kChains) and the positions of one block
// (KvRun: its key tile, this KV head's). Positions past the last whole vector that fits in the
// block's rows (only where a block is narrower than a vector) go one by one, in the same steps.
template <int kChains>
void RunScores(const float* q, int h0, int nh, const KvView& head, const KvRun& run, int head_dim, int64_t stride,
               float scale, float* scores) {
  const int N = static_cast<int>(hn::Lanes(DF()));
  const F16Tile tile(run.k, head.block_size, head_dim);
  const int64_t tile_bytes = kv_tile_bytes(KvType::F16, head_dim, head.block_size);
  int64_t t0 = 0;
  for (; t0 < run.count && t0 + N <= head.block_size; t0 += N) {
    const int nt = static_cast<int>(std::min<int64_t>(N, run.count - t0));
    ScoresVectorOf<kChains>(nh, q, h0, tile, t0 == 0 ? run.next_k : nullptr, tile_bytes, run.first, t0, nt, head_dim,
                            stride, scale, scores);
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
  for (int h0 = 0; h0 < n_q; h0 += kBatch) {
    const int nh = std::min(kBatch, n_q - h0);
    const int64_t until = n_kv + (h0 + nh - 1) / heads_per_row;  // the pass's last row's positions
    for_each_kv_run(head, from, until, [&](const KvRun& run) {
      RunScores<kChains>(q, h0, nh, head, run, head_dim, stride, scale, scores);
    });
  }
}

// out_h += w_h[p] * v_p for heads [h0, h0 + nh) and the positions [first, first + count) of
// one block's F16 value tile (from its slot 0). Slice by slice of head_dim, the heads' sums stay
// in registers over every position (the same steps, in the same order, as adding into out
// position by position). next_v, when not null, is the next block's tile (tile_bytes long).
template <int NH>
void RunValuesOf(const float* weights, int h0, const F16Tile& values, const uint8_t* next_v, int64_t tile_bytes,
                 int64_t first, int64_t count, int head_dim, int64_t w_stride, float* out) {
  const float* w = weights + h0 * w_stride + first;
  // The next block's tile (full, as every block before the last is), its share of a position
  // at a time in the first pass over the positions.
  const int64_t row_bytes = tile_bytes / values.block_size;
  const uint8_t* cursor = next_v;
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  const int vec_end = head_dim / N * N;
  int i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Two slices at once where 32 registers hold their sums: twice the independent chains, so
  // the multiply-adds do not wait on each other's latency.
  for (; i + 2 * N <= vec_end; i += 2 * N) {
    hn::Vec<DF> acc[NH], acc2[NH];
    for (int j = 0; j < NH; ++j) {
      acc[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i);
      acc2[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i + N);
    }
    for (int64_t p = 0; p < count; ++p) {
      if (next_v != nullptr && i == 0) PrefetchUntil(next_v, (p + 1) * row_bytes, cursor);  // its row p
      const auto vv = values.Value(p, i);  // made float once for every head
      const auto vv2 = values.Value(p, i + N);
      for (int j = 0; j < NH; ++j) {
        const auto wj = hn::Set(df, w[j * w_stride + p]);
        acc[j] = hn::MulAdd(wj, vv, acc[j]);
        acc2[j] = hn::MulAdd(wj, vv2, acc2[j]);
      }
    }
    for (int j = 0; j < NH; ++j) {
      hn::StoreU(acc[j], df, out + (h0 + j) * head_dim + i);
      hn::StoreU(acc2[j], df, out + (h0 + j) * head_dim + i + N);
    }
  }
#endif
  for (; i < vec_end; i += N) {
    hn::Vec<DF> acc[NH];
    for (int j = 0; j < NH; ++j) acc[j] = hn::LoadU(df, out + (h0 + j) * head_dim + i);
    for (int64_t p = 0; p < count; ++p) {
      if (next_v != nullptr && i == 0) PrefetchUntil(next_v, (p + 1) * row_bytes, cursor);
      const auto vv = values.Value(p, i);  // made float once for every head
      for (int j = 0; j < NH; ++j) acc[j] = hn::MulAdd(hn::Set(df, w[j * w_stride + p]), vv, acc[j]);
    }
    for (int j = 0; j < NH; ++j) hn::StoreU(acc[j], df, out + (h0 + j) * head_dim + i);
  }
  for (int64_t p = 0; p < count; ++p)
    for (int j = 0; j < NH; ++j)
      for (int i = vec_end; i < head_dim; ++i)
        out[(h0 + j) * head_dim + i] += w[j * w_stride + p] * values.ValueAt(p, i);
}

// RunValuesOf with the head count nh (1 to kValueHeads) as a template argument, so that the
// sums stay in registers.
template <int NH = 1>
void RunValues(const float* weights, int h0, int nh, const F16Tile& tile, const uint8_t* next_v, int64_t tile_bytes,
               int64_t first, int64_t count, int head_dim, int64_t w_stride, float* out) {
  if constexpr (NH < kValueHeads) {
    if (nh > NH)
      return RunValues<NH + 1>(weights, h0, nh, tile, next_v, tile_bytes, first, count, head_dim, w_stride, out);
  }
  RunValuesOf<NH>(weights, h0, tile, next_v, tile_bytes, first, count, head_dim, w_stride, out);
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

template <KvType kType>
void AttentionHeadsOf(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                      int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
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
      inv_sum[j] = static_cast<float>(1.0 / SoftmaxNumerators(w + lo, sees - lo));
      std::fill(w + sees, w + last, 0.0f);  // what a later row sees weighs 0 for this one
    }
    // Every head of the pass over the positions of its last row: a head's sums go over its
    // positions in the order they would alone (an F16 sum adds exact zeros past its row; a Q8_0
    // chunk's scale is its largest weight, which zeros do not change).
    if constexpr (kType == KvType::Q8_0) {
      q8v::Values(nh, scores + h0 * stride, stride, head, lo, last, head_dim, out + h0 * head_dim);
    } else {
      for_each_kv_run(head, lo, last, [&](const KvRun& run) {
        RunValues(scores, h0, nh, F16Tile(run.v, head.block_size, head_dim), run.next_v, tile_bytes, run.first,
                  run.count, head_dim, stride, out);
      });
    }
    for (int j = 0; j < nh; ++j)
      for (int i = 0; i < head_dim; ++i) out[(h0 + j) * head_dim + i] *= inv_sum[j];
  }
}

void AttentionHeads(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                    int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
  if (kv.type == KvType::F16)
    return AttentionHeadsOf<KvType::F16>(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                         window);
  // A block of 32 dimensions must be whole vectors of the values' sums (else: the reference).
  if (hn::Lanes(DF()) * q8v::kVectors != static_cast<size_t>(kKvQ8Block))
    return attention_heads_reference(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                     window);
  AttentionHeadsOf<KvType::Q8_0>(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out, window);
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
                     int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
  HWY_DYNAMIC_DISPATCH(AttentionHeads)(q, n_rows, heads_per_row, kv, kv_head, head_dim, n_kv, scale, scores, out,
                                       window);
}

}  // namespace nanoserve::kernels
#endif
