// The scores of query heads against a Q8_0 cache's keys (attention_heads, attention_simd.cpp):
// the queries quantized to Q8_0, and per block of 32 dimensions the exact integer dot product
// of the levels, by the CPU's byte dot products where it has them, times both scales. A key
// tile holds four dimensions of a position in a 32-bit lane (KvView), so a vector of lanes is
// that many positions, and every position's sum stays in its lane.
//
// Highway's -inl pattern: included inside attention_simd.cpp's per-target namespace.
#if defined(NANOSERVE_KERNELS_Q8_KEY_SCORES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_Q8_KEY_SCORES_INL_H_
#undef NANOSERVE_KERNELS_Q8_KEY_SCORES_INL_H_
#else
#define NANOSERVE_KERNELS_Q8_KEY_SCORES_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>

#include "kernels/attention.h"
#include "kernels/prefetch-inl.h"
#include "kernels/quant_dot_common-inl.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // as in quant_dot_common-inl.h, whose DotBytes these inline
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace q8k {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI32 = hn::Rebind<int32_t, DF>;
using DU32 = hn::Rebind<uint32_t, DF>;

// Query heads a pass over a block's keys takes: each holds an integer sum (of the block of 32
// dimensions at hand) and a float one in registers, beside the keys' vectors.
constexpr int kHeads = !HWY_ARCH_X86 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL ? 12 : 6;

using Query = KvQ8Query;  // one query head, quantized (attention.h)

// A query's levels [d, d + 4) as one 32-bit word (the four a key lane holds).
HWY_INLINE int32_t Four(const Query& q, int d) {
  int32_t four;
  std::memcpy(&four, q.levels + d, sizeof four);
  return four;
}

// The integer dot products of a block of 32 dimensions, four dimensions a step, in one of three
// ways, each exact, so that every target's sums are the same integers:
// - AVX-512 VNNI: vpdpbusd, the key bytes (level + 128, unsigned) times the query's levels
//   (signed), four a lane; the sum starts at -128 × the query's level sum, which takes the
//   +128 back.
// - AVX2: vpmaddubsw takes unsigned times signed bytes but saturates its pair sums; the key's
//   signed levels (the bytes ^ 0x80) with the sign of the query's, times |query level| (a pair
//   at most 2 · 127 · 127 < 2^15), then vpmaddwd adds the pairs into the lane.
// - Elsewhere in float: each of a lane's four bytes widened to a float once for every head, then
//   multiply-adds with the query's levels from -128 × their sum; every partial sum is an integer
//   below 2^24 in magnitude, so exact too.
#if HWY_TARGET == HWY_AVX3_DL
using Sum = hn::Vec<DI32>;
struct KeyFour {
  hn::Vec<hn::Repartition<uint8_t, DI32>> bytes;
};
HWY_INLINE KeyFour LoadFour(const uint8_t* at) { return {hn::LoadU(hn::Repartition<uint8_t, DI32>(), at)}; }
HWY_INLINE Sum Start(const Query& q, int g) { return hn::Set(DI32(), q.minus_128_sums[g]); }
HWY_INLINE Sum Step(Sum acc, const KeyFour& key, const Query& q, int d) {
  return qd::DotBytes(acc, key.bytes, hn::BitCast(hn::Repartition<int8_t, DI32>(), hn::Set(DI32(), Four(q, d))));
}
HWY_INLINE hn::Vec<DF> ToFloat(Sum acc) { return hn::ConvertTo(DF(), acc); }
#elif HWY_TARGET == HWY_AVX2
using Sum = hn::Vec<DI32>;
struct KeyFour {
  qd::VI8 levels;
};
HWY_INLINE KeyFour LoadFour(const uint8_t* at) {
  const qd::DU8 du8;
  return {hn::BitCast(qd::DI8(), hn::Xor(hn::LoadU(du8, at), hn::Set(du8, 0x80)))};
}
HWY_INLINE Sum Start(const Query&, int) { return hn::Zero(DI32()); }
HWY_INLINE Sum Step(Sum acc, const KeyFour& key, const Query& q, int d) {
  const auto query = hn::BitCast(qd::DI8(), hn::Set(DI32(), Four(q, d)));
  const auto pairs = qd::PairSums(hn::BitCast(qd::DU8(), hn::Abs(query)), qd::WithSignOf(key.levels, query));
  return hn::Add(acc, qd::WidenPairs(pairs));
}
HWY_INLINE hn::Vec<DF> ToFloat(Sum acc) { return hn::ConvertTo(DF(), acc); }
#else
using Sum = hn::Vec<DF>;
struct KeyFour {
  hn::Vec<DF> byte[4];
};
HWY_INLINE KeyFour LoadFour(const uint8_t* at) {
  const DU32 du;
  const auto lanes = hn::LoadU(du, reinterpret_cast<const uint32_t*>(at));
  const auto low = hn::Set(du, 0xff);
  // Made whole (a KeyFour default-made first calls the vectors' constructors from one without
  // the target's attributes, which GCC refuses for NEON).
  return {{hn::ConvertTo(DF(), hn::BitCast(DI32(), hn::And(lanes, low))),
           hn::ConvertTo(DF(), hn::BitCast(DI32(), hn::And(hn::ShiftRight<8>(lanes), low))),
           hn::ConvertTo(DF(), hn::BitCast(DI32(), hn::And(hn::ShiftRight<16>(lanes), low))),
           hn::ConvertTo(DF(), hn::BitCast(DI32(), hn::ShiftRight<24>(lanes)))}};
}
HWY_INLINE Sum Start(const Query& q, int g) { return hn::Set(DF(), static_cast<float>(q.minus_128_sums[g])); }
HWY_INLINE Sum Step(Sum acc, const KeyFour& key, const Query& q, int d) {
  for (int i = 0; i < 4; ++i) acc = hn::MulAdd(key.byte[i], hn::Set(DF(), static_cast<float>(q.levels[d + i])), acc);
  return acc;
}
HWY_INLINE hn::Vec<DF> ToFloat(Sum acc) { return acc; }
#endif

// scores[(h0 + j) * stride + first + t] = scale * (query j's score against slot t) for the NH
// queries and the slots [t0, t0 + nt) of one block's key tile, one slot a lane. The vectors read
// the tile from t0 on, past the block's count where it is part-filled (the slots exist; their
// lanes are never stored). next_k, when not null, is the next block's tile (tile_bytes long),
// asked for line by line as the rows go by.
template <int NH>
void ScoresVector(const Query* queries, int h0, const uint8_t* tile, int64_t block_size, const uint8_t* next_k,
                  int64_t tile_bytes, int64_t first, int64_t t0, int nt, int head_dim, int64_t stride, float scale,
                  float* scores) {
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  const uint8_t* cursor = next_k;
  const int64_t row_bytes = 4 * block_size;                       // a row of fours of every slot
  const int64_t fetch_per_row = tile_bytes / (head_dim / 4);       // the next tile's share of a row (scales too)
  const uint16_t* key_scales = kv_q8_scales(tile, head_dim, block_size) + t0;
  const uint8_t* fours = tile + 4 * t0;
  hn::Vec<DF> score[NH];
  for (int j = 0; j < NH; ++j) score[j] = hn::Zero(df);
  for (int g = 0; g < head_dim / kKvQ8Block; ++g) {
    Sum dot[NH];
    for (int j = 0; j < NH; ++j) dot[j] = Start(queries[j], g);
    for (int d = g * kKvQ8Block; d < (g + 1) * kKvQ8Block; d += 4) {
      if (next_k != nullptr) PrefetchUntil(next_k, (d / 4 + 1) * fetch_per_row, cursor);
      const KeyFour key = LoadFour(fours + d / 4 * row_bytes);  // read once for every head
      for (int j = 0; j < NH; ++j) dot[j] = Step(dot[j], key, queries[j], d);
    }
    const auto key_scale = hn::PromoteTo(
        df, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), reinterpret_cast<const hwy::float16_t*>(key_scales)));
    key_scales += block_size;
    for (int j = 0; j < NH; ++j)
      score[j] = hn::MulAdd(ToFloat(dot[j]), hn::Mul(key_scale, hn::Set(df, queries[j].scales[g])), score[j]);
  }
  HWY_ALIGN float part[hn::MaxLanes(df)];
  for (int j = 0; j < NH; ++j) {
    const auto scaled = hn::Mul(score[j], hn::Set(df, scale));
    float* out = scores + (h0 + j) * stride + first + t0;
    if (nt == N) {
      hn::StoreU(scaled, df, out);
    } else {
      hn::Store(scaled, df, part);
      std::copy(part, part + nt, out);
    }
  }
}

// ScoresVector with the head count nh (1 to kHeads) as a template argument, so that the sums
// stay in registers.
template <int NH = 1>
void ScoresVectorOf(int nh, const Query* queries, int h0, const uint8_t* tile, int64_t block_size,
                    const uint8_t* next_k, int64_t tile_bytes, int64_t first, int64_t t0, int nt, int head_dim,
                    int64_t stride, float scale, float* scores) {
  if constexpr (NH < kHeads) {
    if (nh > NH)
      return ScoresVectorOf<NH + 1>(nh, queries, h0, tile, block_size, next_k, tile_bytes, first, t0, nt, head_dim,
                                    stride, scale, scores);
  }
  ScoresVector<NH>(queries, h0, tile, block_size, next_k, tile_bytes, first, t0, nt, head_dim, stride, scale, scores);
}

// The scores of query heads [h0, h0 + n_q) (n_rows rows of heads_per_row, at q; a row sees
// positions [0, n_kv + its row)) against the keys of `head` (a KV head's view) from the block
// that holds `from`, in passes of kHeads heads, as Scores does for an F16 cache.
inline void Scores(const float* q, int n_rows, int heads_per_row, const KvView& head, int head_dim, int64_t from,
                   int64_t n_kv, float scale, int64_t stride, float* scores) {
  const int N = static_cast<int>(hn::Lanes(DF()));
  const int n_q = n_rows * heads_per_row;
  const int64_t tile_bytes = kv_tile_bytes(KvType::Q8_0, head_dim, head.block_size);
  Query queries[kHeads];
  for (int h0 = 0; h0 < n_q; h0 += kHeads) {
    const int nh = std::min(kHeads, n_q - h0);
    for (int j = 0; j < nh; ++j) queries[j].quantize(q + (h0 + j) * head_dim, head_dim);
    const int64_t until = n_kv + (h0 + nh - 1) / heads_per_row;  // the pass's last row's positions
    for_each_kv_run(head, from, until, [&](const KvRun& run) {
      int64_t t0 = 0;
      for (; t0 < run.count && t0 + N <= head.block_size; t0 += N) {
        const int nt = static_cast<int>(std::min<int64_t>(N, run.count - t0));
        ScoresVectorOf(nh, queries, h0, run.k, head.block_size, t0 == 0 ? run.next_k : nullptr, tile_bytes, run.first,
                       t0, nt, head_dim, stride, scale, scores);
      }
      for (; t0 < run.count; ++t0)  // a block narrower than a vector: one by one
        for (int j = 0; j < nh; ++j)
          scores[(h0 + j) * stride + run.first + t0] = kv_q8_key_dot(queries[j], run.k, head.block_size, t0, head_dim) * scale;
    });
  }
}

}  // namespace q8k
}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
