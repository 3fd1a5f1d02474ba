// The weighted sum of a Q8_0 cache's values (attention_heads, attention_simd.cpp), chunk by chunk
// of a block's slots (kKvQ8Chunk): each head's softmax weights times the values' scales,
// quantized to unsigned bytes against the chunk's largest (KvQ8WeightScale), then the exact
// integer sums of those levels times the value levels, by the CPU's byte dot products where it
// has them. A value tile holds one dimension of four slots in a 32-bit lane (KvView), so one
// byte dot product adds four positions of a vector of dimensions into their lanes, against a
// head's four weights broadcast.
//
// Highway's -inl pattern: included inside attention_simd.cpp's per-target namespace.
#if defined(NANOSERVE_KERNELS_Q8_VALUE_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_Q8_VALUE_SUMS_INL_H_
#undef NANOSERVE_KERNELS_Q8_VALUE_SUMS_INL_H_
#else
#define NANOSERVE_KERNELS_Q8_VALUE_SUMS_INL_H_
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
namespace q8v {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI32 = hn::Rebind<int32_t, DF>;

constexpr int kHeads = 8;  // query heads whose sums share one pass over the values
// Vectors that hold a block of 32 dimensions (ValuesOf needs Lanes(DF()) * kVectors == 32).
constexpr int kVectors = std::max(1, static_cast<int>(kKvQ8Block / hn::MaxLanes(DF())));

// ChunkWeights<NH>: the weights of NH heads (padded to a multiple of four with zeros) for one
// chunk and one block g of 32 dimensions: their levels (bytes; Four(j, q) those of slots [4q,
// 4q + 4) as one word) and each head's chunk scale (KvQ8WeightScale, computed in vectors: the
// same divisions). Made from the products u (ChunkProducts: head j's weights times the values'
// scales, kKvQ8Chunk lanes per head).
constexpr int kPadded(int nh) { return (nh + 3) / 4 * 4; }

#if HWY_TARGET == HWY_AVX3_DL
// AVX-512: a vector is a chunk. The heads' largest weights come out of one tree of shuffles and
// maxima (head k's in lane k % 4 * 4 + k / 4 * 2), and four heads' levels are packed into one
// vector by two saturating packs (values 0..255 pass unchanged), which leave head 4m + k's
// levels of slots [4q, 4q + 4) in word 4q + k of vector m. Highway 1.0.3 has neither the in-lane
// packs nor a rounding conversion without its overflow fix-up, which these levels (0..255.5)
// never need.
template <int NH>
struct ChunkWeights {
  static_assert(NH <= 8, "the tree takes 4 or 8 heads");
  static constexpr int kV = kPadded(NH);
  HWY_ALIGN int32_t packed[kV / 4][kKvQ8Chunk];
  HWY_ALIGN float scale[16], inv[16];

  static int Lane(int k) { return k % 4 * 4 + k / 4 * 2; }
  float Scale(int j) const { return scale[Lane(j)]; }
  HWY_INLINE int32_t Four(int j, int q) const { return packed[j / 4][4 * q + j % 4]; }

  explicit ChunkWeights(const __m512* u) {
    __m512 half[kV / 2], quarter[kV / 4];
    for (int k = 0; k < kV / 2; ++k)  // 128-bit quarters 0, 1 against 2, 3: head 2k's in 0, 1, 2k + 1's in 2, 3
      half[k] = _mm512_max_ps(_mm512_shuffle_f32x4(u[2 * k], u[2 * k + 1], 0x44),
                              _mm512_shuffle_f32x4(u[2 * k], u[2 * k + 1], 0xEE));
    for (int k = 0; k < kV / 4; ++k)  // quarter 0 against 1: head 4k + i's in quarter i
      quarter[k] = _mm512_max_ps(_mm512_shuffle_f32x4(half[2 * k], half[2 * k + 1], 0x88),
                                 _mm512_shuffle_f32x4(half[2 * k], half[2 * k + 1], 0xDD));
    // Floats 0, 1 against 2, 3 of each quarter (eight heads: the second four's into floats 2, 3),
    // then 0 against 1 and 2 against 3.
    const __m512 pairs =
        kV == 8 ? _mm512_max_ps(_mm512_shuffle_ps(quarter[0], quarter[kV / 8], 0x44),
                                _mm512_shuffle_ps(quarter[0], quarter[kV / 8], 0xEE))
                : _mm512_max_ps(quarter[0], _mm512_shuffle_ps(quarter[0], quarter[0], 0x4E));
    const __m512 largest = _mm512_max_ps(pairs, _mm512_shuffle_ps(pairs, pairs, 0xB1));
    const __m512 v255 = _mm512_set1_ps(255.0f);
    _mm512_store_ps(scale, _mm512_div_ps(largest, v255));
    _mm512_store_ps(inv, _mm512_maskz_div_ps(_mm512_cmp_ps_mask(largest, _mm512_setzero_ps(), _CMP_GT_OQ), v255,
                                             largest));
    for (int m = 0; m < kV / 4; ++m) {
      __m512i level[4];
      for (int k = 0; k < 4; ++k)
        level[k] = _mm512_cvtps_epi32(_mm512_mul_ps(u[4 * m + k], _mm512_set1_ps(inv[Lane(4 * m + k)])));
      _mm512_store_si512(packed[m], _mm512_packus_epi16(_mm512_packus_epi32(level[0], level[1]),
                                                        _mm512_packus_epi32(level[2], level[3])));
    }
  }
};
#else
// Elsewhere: each head's largest by Highway's MaxOfLanes, its levels by NearestInt and DemoteTo.
template <int NH>
struct ChunkWeights {
  HWY_ALIGN uint8_t levels[kPadded(NH)][kKvQ8Chunk];
  HWY_ALIGN float scale[kPadded(NH) + hn::MaxLanes(DF())];
  HWY_ALIGN float inv[kPadded(NH) + hn::MaxLanes(DF())];

  float Scale(int j) const { return scale[j]; }
  HWY_INLINE int32_t Four(int j, int q) const {
    int32_t four;
    std::memcpy(&four, levels[j] + 4 * q, sizeof four);
    return four;
  }

  // u: head j's lanes at u + j * kKvQ8Chunk.
  explicit ChunkWeights(const float* u) {
    const DF df;
    const int N = static_cast<int>(hn::Lanes(df));
    std::fill(scale, scale + kPadded(NH) + N, 0.0f);
    for (int j = 0; j < kPadded(NH); ++j) {
      auto largest = hn::Zero(df);
      for (int t = 0; t < kKvQ8Chunk; t += N) largest = hn::Max(largest, hn::Load(df, u + j * kKvQ8Chunk + t));
      scale[j] = hn::GetLane(hn::MaxOfLanes(df, largest));  // the largest, for now
    }
    const auto v255 = hn::Set(df, 255.0f);
    for (int k = 0; k < kPadded(NH); k += N) {
      const auto largest = hn::Load(df, scale + k);
      hn::Store(hn::IfThenElseZero(hn::Gt(largest, hn::Zero(df)), hn::Div(v255, largest)), df, inv + k);
      hn::Store(hn::Div(largest, v255), df, scale + k);
    }
    const hn::Rebind<uint8_t, DF> du8;
    for (int j = 0; j < kPadded(NH); ++j)
      for (int t = 0; t < kKvQ8Chunk; t += N)
        hn::StoreU(hn::DemoteTo(du8, hn::NearestInt(hn::Mul(hn::Load(df, u + j * kKvQ8Chunk + t), hn::Set(df, inv[j])))),
                   du8, levels[j] + t);
  }
};
#endif

// head j's weights times the values' scales, for the chunk's slots t < n (zero past them): the
// weights at weights[j * stride + t], the scales (F16) at scales[t].
template <int NH>
struct ChunkProducts {
#if HWY_TARGET == HWY_AVX3_DL
  __m512 u[kPadded(NH)];
  const __m512* data() const { return u; }
#else
  HWY_ALIGN float u[kPadded(NH) * kKvQ8Chunk];
  const float* data() const { return u; }
#endif
  ChunkProducts(const float* weights, int64_t stride, const uint16_t* scales, int n) {
    const DF df;
    const int N = static_cast<int>(hn::Lanes(df));
    HWY_ALIGN float w[kKvQ8Chunk];
    HWY_ALIGN uint16_t s[kKvQ8Chunk];
    if (n < kKvQ8Chunk) {  // a part-filled chunk: the slots past n weigh 0
      std::fill(s, s + kKvQ8Chunk, uint16_t{0});
      std::copy(scales, scales + n, s);
      scales = s;
    }
    for (int j = 0; j < kPadded(NH); ++j) {
      const float* wj = weights + j * stride;
      if (j < NH && n < kKvQ8Chunk) {
        std::fill(w, w + kKvQ8Chunk, 0.0f);
        std::copy(wj, wj + n, w);
        wj = w;
      }
      for (int t = 0; t < kKvQ8Chunk; t += N) {
        const auto product = j < NH ? hn::Mul(hn::LoadU(df, wj + t), Widen(scales + t)) : hn::Zero(df);
#if HWY_TARGET == HWY_AVX3_DL
        u[j] = product.raw;
#else
        hn::Store(product, df, u + j * kKvQ8Chunk + t);
#endif
      }
    }
  }

  static HWY_INLINE hn::Vec<DF> Widen(const uint16_t* at) {
    return hn::PromoteTo(DF(), hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), reinterpret_cast<const hwy::float16_t*>(at)));
  }
};

// Four slots' levels of a vector of dimensions (a lane each), and a head's four weights times
// them added into its sums, in one of two ways, both exact, so that every target's sums are
// the same integers:
// - AVX-512 VNNI: vpdpbusd, the weights' levels (unsigned) times the value levels (signed).
// - Elsewhere in float: each of a lane's four bytes widened to a float once for every head, then
//   multiply-adds with the weights' levels; every partial sum is an integer below 2^24 in
//   magnitude (16 slots × 255 × 127), so exact too.
#if HWY_TARGET == HWY_AVX3_DL
using Sum = hn::Vec<DI32>;
struct ValueFour {
  hn::Vec<hn::Repartition<int8_t, DI32>> bytes;
};
HWY_INLINE ValueFour LoadFour(const uint8_t* at) {
  return {hn::LoadU(hn::Repartition<int8_t, DI32>(), reinterpret_cast<const int8_t*>(at))};
}
HWY_INLINE Sum Step(Sum acc, const ValueFour& values, int32_t weights) {
  return qd::DotBytes(acc, hn::BitCast(hn::Repartition<uint8_t, DI32>(), hn::Set(DI32(), weights)), values.bytes);
}
HWY_INLINE hn::Vec<DF> ToFloat(Sum acc) { return hn::ConvertTo(DF(), acc); }
HWY_INLINE Sum Zero() { return hn::Zero(DI32()); }
#else
using Sum = hn::Vec<DF>;
struct ValueFour {
  hn::Vec<DF> byte[4];
  // Written out, so that they carry the target's attributes: the ones GCC makes call NEON's
  // vector constructors from a function without them, which it refuses.
  HWY_INLINE ValueFour() {}
  HWY_INLINE ValueFour(hn::Vec<DF> b0, hn::Vec<DF> b1, hn::Vec<DF> b2, hn::Vec<DF> b3) : byte{b0, b1, b2, b3} {}
};
HWY_INLINE ValueFour LoadFour(const uint8_t* at) {
  const DI32 di;
  const auto lanes = hn::LoadU(di, reinterpret_cast<const int32_t*>(at));
  // Each byte to the top of its lane, then shifted down with its sign.
  return ValueFour(hn::ConvertTo(DF(), hn::ShiftRight<24>(hn::ShiftLeft<24>(lanes))),
                   hn::ConvertTo(DF(), hn::ShiftRight<24>(hn::ShiftLeft<16>(lanes))),
                   hn::ConvertTo(DF(), hn::ShiftRight<24>(hn::ShiftLeft<8>(lanes))),
                   hn::ConvertTo(DF(), hn::ShiftRight<24>(lanes)));
}
HWY_INLINE Sum Step(Sum acc, const ValueFour& values, int32_t weights) {
  uint8_t level[4];
  std::memcpy(level, &weights, sizeof level);
  for (int i = 0; i < 4; ++i) acc = hn::MulAdd(values.byte[i], hn::Set(DF(), static_cast<float>(level[i])), acc);
  return acc;
}
HWY_INLINE hn::Vec<DF> ToFloat(Sum acc) { return acc; }
HWY_INLINE Sum Zero() { return hn::Zero(DF()); }
#endif

// out (head j's at out + j * head_dim) = the NH heads' weighted values of positions [from,
// until) of a KV head's cache (head), their weights at weights[j * stride + p] (0 where a head's
// row does not see p): block g of 32 dimensions at a time, over every block of the cache and
// chunk by chunk, the sums in registers (where they fit) from the first chunk to the last. Each
// block's next tile is asked for as g's share of it goes by (its scales first).
template <int NH>
void ValuesOf(const float* weights, int64_t stride, const KvView& head, int64_t from, int64_t until, int head_dim,
              float* out) {
  const DF df;
  const int N = static_cast<int>(hn::Lanes(df));
  for (int g = 0; g < head_dim / static_cast<int>(kKvQ8Block); ++g) {
    hn::Vec<DF> sum[NH][kVectors];
    for (int j = 0; j < NH; ++j)
      for (int s = 0; s < kVectors; ++s) sum[j][s] = hn::Zero(df);
    for_each_kv_run(head, from, until, [&](const KvRun& run) {
      const uint16_t* scales = kv_q8_scales(run.v, head_dim, head.block_size) + g * head.block_size;
      // The next tile's scales first: its first chunk's products wait on them.
      if (run.next_v != nullptr) hwy::Prefetch(kv_q8_scales(run.next_v, head_dim, head.block_size) + g * head.block_size);
      for (int64_t c = 0; c < run.count; c += kKvQ8Chunk) {
        const int n = static_cast<int>(std::min<int64_t>(kKvQ8Chunk, run.count - c));
        const ChunkWeights<NH> weight(ChunkProducts<NH>(weights + run.first + c, stride, scales + c, n).data());
        const uint8_t* fours = run.v + (c / 4 * head_dim + g * kKvQ8Block) * 4;  // g's part of each row of fours
        Sum acc[NH][kVectors];
        for (int j = 0; j < NH; ++j)
          for (int s = 0; s < kVectors; ++s) acc[j][s] = Zero();
        for (int q = 0; q < (n + 3) / 4; ++q) {  // the last four's slots past n weigh 0
          if (run.next_v != nullptr) {  // the next tile's row of fours, g's part, as this one's goes by
            hwy::Prefetch(run.next_v + (fours - run.v) + q * head_dim * 4);
            hwy::Prefetch(run.next_v + (fours - run.v) + q * head_dim * 4 + kKvQ8Block * 2);
          }
          ValueFour values[kVectors];  // read once for every head
          for (int s = 0; s < kVectors; ++s) values[s] = LoadFour(fours + (q * head_dim + s * N) * 4);
          for (int j = 0; j < NH; ++j) {
            const int32_t four = weight.Four(j, q);
            for (int s = 0; s < kVectors; ++s) acc[j][s] = Step(acc[j][s], values[s], four);
          }
        }
        for (int j = 0; j < NH; ++j) {
          const auto scale = hn::Set(df, weight.Scale(j));
          for (int s = 0; s < kVectors; ++s) sum[j][s] = hn::MulAdd(ToFloat(acc[j][s]), scale, sum[j][s]);
        }
      }
    });
    for (int j = 0; j < NH; ++j)
      for (int s = 0; s < kVectors; ++s) hn::StoreU(sum[j][s], df, out + j * head_dim + g * kKvQ8Block + s * N);
  }
}

// ValuesOf with the head count nh (1 to kHeads) as a template argument, so that the sums stay
// in registers.
template <int NH = 1>
void Values(int nh, const float* weights, int64_t stride, const KvView& head, int64_t from, int64_t until,
            int head_dim, float* out) {
  if constexpr (NH < kHeads) {
    if (nh > NH) return Values<NH + 1>(nh, weights, stride, head, from, until, head_dim, out);
  }
  ValuesOf<NH>(weights, stride, head, from, until, head_dim, out);
}

}  // namespace q8v
}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
