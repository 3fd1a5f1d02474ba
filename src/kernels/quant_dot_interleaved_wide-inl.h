// The fused kernels for a pair of groups interleaved by 8 (tensor/interleave.h) in 512-bit
// vectors, both groups' rows in the lanes of each (AVX-512 VNNI only): blocks of 32, Q4_K and
// Q6_K (quant_dot-inl.h).
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_WIDE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_WIDE_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_WIDE_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_WIDE_INL_H_
#endif

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/quant_dot_common-inl.h"
#include "kernels/quant_dot_interleaved-inl.h"
#include "kernels/weight_rows.h"
#include "tensor/blocks.h"
#include "tensor/interleave.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // as in quant_dot_common-inl.h
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

#if NANOSERVE_FUSED_QUANT_DOT && HWY_TARGET == HWY_AVX3_DL
namespace qd {

// A pair of interleaved groups of blocks of 32 (tensor/interleave.h) at once in 512-bit
// vectors: lanes 0..7 hold the first group's rows, lanes 8..15 the second's. A 512-bit vpdpbusd does the work of
// two 256-bit ones for the same instruction count, so per activation row a block costs 8
// byte dot products and one float step for 16 weight rows instead of 8 (the per-lane steps
// are DotBlock32x8's, so the result is the same bit for bit).
using DU8W = hn::Full512<uint8_t>;
using DI32W = hn::Full512<int32_t>;
using DFW = hn::Full512<float>;
using VU8W = hn::Vec<DU8W>;
using VI32W = hn::Vec<DI32W>;
using VFW = hn::Vec<DFW>;

HWY_INLINE VI32W DotBytesWide(VI32W acc, VU8W u, VI32W s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc.raw) : "v"(u.raw), "v"(s.raw));
  return acc;
}

HWY_INLINE VI32W BroadcastWord(const int8_t* q) {
  int32_t bytes;
  std::memcpy(&bytes, q, sizeof bytes);
  return hn::Set(DI32W(), bytes);
}

// Q5_0's fifth bits of one chunk in both groups (a 32-bit word each) as 0 or 16 per byte.
HWY_INLINE VU8W FifthBitsWide(const uint8_t* lo_bits, const uint8_t* hi_bits) {
  uint32_t lo, hi;
  std::memcpy(&lo, lo_bits, sizeof lo);
  std::memcpy(&hi, hi_bits, sizeof hi);
  const uint64_t bits = static_cast<uint64_t>(hi) << 32 | lo;
  const DU8W du;
  return hn::IfThenElseZero(hn::LoadMaskBits(du, reinterpret_cast<const uint8_t*>(&bits)), hn::Set(du, 16));
}

// The unsigned levels of chunks 2m and 2m + 1 of block `lo` (first group) and block `hi`
// (second group), as InterleavedChunks gives them for one group.
template <class Block>
HWY_INLINE void InterleavedChunksWide(const uint8_t* lo, const uint8_t* hi, int m, VU8W& even, VU8W& odd) {
  const DU8 du;
  const DU8W duw;
  const uint8_t* lo_levels = lo + 2 * tensor::kInterleaveRows;
  const uint8_t* hi_levels = hi + 2 * tensor::kInterleaveRows;
  if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    even = hn::Combine(duw, hn::LoadU(du, hi_levels + 64 * m), hn::LoadU(du, lo_levels + 64 * m));
    odd = hn::Combine(duw, hn::LoadU(du, hi_levels + 64 * m + 32), hn::LoadU(du, lo_levels + 64 * m + 32));
  } else {
    const VU8W nibbles = hn::Combine(duw, hn::LoadU(du, hi_levels + 32 * m), hn::LoadU(du, lo_levels + 32 * m));
    even = Nibbles<0>(nibbles);
    odd = Nibbles<4>(nibbles);
    if constexpr (std::is_same_v<Block, tensor::BlockQ5_0>) {
      const size_t bits = 128 + 8 * m;
      even = hn::Or(even, FifthBitsWide(lo_levels + bits, hi_levels + bits));
      odd = hn::Or(odd, FifthBitsWide(lo_levels + bits + 4, hi_levels + bits + 4));
    }
  }
}

// A pair of interleaved groups × NR activation rows: out[r * 16 + j] for the first group's
// row j, out[r * 16 + 8 + j] for the second's, as DotBlock32x8 would give them.
template <class Block, int NR>
void DotBlock32x16(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a,
                   const int32_t* minus_128_sums, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(Block);
  constexpr int kShift = 7 - kLevelOffsetLog2<Block>;
  const int64_t nb = n / 32;
  const DI32W di;
  const DFW df;
  VFW acc[NR];
  for (auto& v : acc) v = hn::Zero(df);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* lo = pair + 2 * b * kBlockBytes;
    const uint8_t* hi = lo + kBlockBytes;
    PrefetchAhead<2 * kBlockBytes, Ahead::kL2>(lo, end);
    const VFW dw = hn::Combine(df, HalvesToFloats(hi), HalvesToFloats(lo));
    VU8W w[8];
    for (int m = 0; m < 4; ++m) InterleavedChunksWide<Block>(lo, hi, m, w[2 * m], w[2 * m + 1]);
    // One chain per activation row, the rows' steps interleaved: NR independent chains in
    // flight, in the order the scheduler sees them.
    VI32W s[NR];
    for (int r = 0; r < NR; ++r) s[r] = hn::Set(di, minus_128_sums[r * nb + b] >> kShift);
    for (int k = 0; k < 8; ++k)
      for (int r = 0; r < NR; ++r) s[r] = DotBytesWide(s[r], w[k], BroadcastWord(a[r].q + 32 * b + 4 * k));
    for (int r = 0; r < NR; ++r)
      acc[r] = hn::Add(acc[r], hn::Mul(hn::ConvertTo(df, s[r]), hn::Mul(dw, hn::Set(df, a[r].d[b]))));
  }
  for (int r = 0; r < NR; ++r) hn::StoreU(acc[r], df, out + 16 * r);
}

// The 32 bytes at lo (first group) and hi (second group) as one vector.
HWY_INLINE VU8W LoadPair(const uint8_t* lo, const uint8_t* hi) {
  const DU8 du;
  return hn::Combine(DU8W(), hn::LoadU(du, hi), hn::LoadU(du, lo));
}

// Per sub-block j, the 8 bytes of each group's 64 (index 8 × j + row) side by side:
// out[16 j + 8 g + row].
HWY_INLINE void PairBySubBlock(const uint8_t (&groups)[2][64], uint8_t* out) {
  for (int j = 0; j < 8; ++j)
    for (int g = 0; g < 2; ++g) std::memcpy(out + 16 * j + 8 * g, groups[g] + 8 * j, 8);
}

// DotQ4_Kx8 for a pair of interleaved groups in 512-bit vectors: out[r * 16 + j], the same
// per-lane steps, so the same results bit for bit.
template <int NR>
void DotQ4_Kx16(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(tensor::BlockQ4_K);
  const DI32W di;
  const DFW df;
  const hn::Rebind<uint8_t, DI32W> du8x16;
  VFW sum[NR], sum_mins[NR];
  for (int r = 0; r < NR; ++r) sum[r] = sum_mins[r] = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    const uint8_t* lo = pair + 2 * b * kBlockBytes;
    const uint8_t* hi = lo + kBlockBytes;
    PrefetchAhead<2 * kBlockBytes, Ahead::kL1AndL2>(lo, end);
    const VFW d = hn::Combine(df, HalvesToFloats(hi), HalvesToFloats(lo));
    const VFW dmin = hn::Combine(df, HalvesToFloats(hi + 16), HalvesToFloats(lo + 16));
    HWY_ALIGN uint8_t sc[2][64], mn[2][64], sc16[128], mn16[128];
    Q4_KScalesMins(lo, sc[0], mn[0]);
    Q4_KScalesMins(hi, sc[1], mn[1]);
    PairBySubBlock(sc, sc16);
    PairBySubBlock(mn, mn16);
    VI32W isum[NR];
    for (auto& v : isum) v = hn::Zero(di);
    for (int j = 0; j < 8; ++j) {
      VU8W w[8];
      for (int m = 0; m < 4; ++m) {
        const VU8W nibbles = LoadPair(lo + 128 + 128 * j + 32 * m, hi + 128 + 128 * j + 32 * m);
        w[2 * m] = Nibbles<0>(nibbles);
        w[2 * m + 1] = Nibbles<4>(nibbles);
      }
      VI32W dots[NR];
      for (auto& v : dots) v = hn::Zero(di);
      for (int k = 0; k < 8; ++k)
        for (int r = 0; r < NR; ++r)
          dots[r] = DotBytesWide(dots[r], w[k], BroadcastWord(a[r].q + 256 * b + 32 * j + 4 * k));
      const VI32W scale = hn::PromoteTo(di, hn::LoadU(du8x16, sc16 + 16 * j));
      for (int r = 0; r < NR; ++r) isum[r] = hn::Add(isum[r], hn::Mul(dots[r], scale));
    }
    VI32W min_pairs[8];
    for (int j = 0; j < 8; ++j) {
      const VI32W m = hn::PromoteTo(di, hn::LoadU(du8x16, mn16 + 16 * j));
      min_pairs[j] = hn::Or(m, hn::ShiftLeft<16>(m));
    }
    for (int r = 0; r < NR; ++r) {
      const VI32W msum = PairDots(min_pairs, a[r].bsums + 16 * b);
      const VFW da = hn::Set(df, a[r].d[b]);
      sum[r] = hn::Add(sum[r], hn::Mul(hn::Mul(da, d), hn::ConvertTo(df, isum[r])));
      sum_mins[r] = hn::Add(sum_mins[r], hn::Mul(hn::Mul(da, dmin), hn::ConvertTo(df, msum)));
    }
  }
  for (int r = 0; r < NR; ++r) hn::StoreU(hn::Sub(sum[r], sum_mins[r]), df, out + 16 * r);
}

// DotQ6_Kx8 for a pair of interleaved groups: out[r * 16 + j], bit for bit the same.
template <int NR>
void DotQ6_Kx16(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(tensor::BlockQ6_K);
  const DI16 d16;
  const hn::Full128<int8_t> d8x16;
  const DI32W di;
  const DFW df;
  VFW sum[NR];
  for (auto& v : sum) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    const uint8_t* lo = pair + 2 * b * kBlockBytes;
    const uint8_t* hi = lo + kBlockBytes;
    PrefetchAhead<2 * kBlockBytes, Ahead::kL1AndL2>(lo, end);
    const VFW d = hn::Combine(df, HalvesToFloats(hi), HalvesToFloats(lo));
    VI32W scale_pairs[8];
    for (int j = 0; j < 8; ++j) {
      const auto pairs = [&](const uint8_t* block) {
        return hn::BitCast(DI32(), hn::PromoteTo(d16, hn::LoadU(d8x16, reinterpret_cast<const int8_t*>(block + 16 + 16 * j))));
      };
      scale_pairs[j] = hn::Combine(di, pairs(hi), pairs(lo));
    }
    VI32W isum[NR];
    for (auto& v : isum) v = hn::Zero(di);
    for (int j = 0; j < 8; ++j) {
      const size_t levels = 144 + 192 * j;
      VU8W w[8];
      for (int m = 0; m < 4; ++m) {
        const VU8W nibbles = LoadPair(lo + levels + 32 * m, hi + levels + 32 * m);
        w[2 * m] = Nibbles<0>(nibbles);
        w[2 * m + 1] = Nibbles<4>(nibbles);
      }
      for (int v = 0; v < 2; ++v) {
        const VU8W top = LoadPair(lo + levels + 128 + 32 * v, hi + levels + 128 + 32 * v);
        for (int h = 0; h < 4; ++h) w[4 * v + h] = WithTopBits(w[4 * v + h], top, h);
      }
      const VI32W pairs = scale_pairs[j];
      const VI32W scale_lo = hn::ShiftRight<16>(hn::ShiftLeft<16>(pairs)), scale_hi = hn::ShiftRight<16>(pairs);
      VI32W s_lo[NR], s_hi[NR];  // elements 0..15 and 16..31
      for (int r = 0; r < NR; ++r) s_lo[r] = s_hi[r] = hn::Zero(di);
      for (int k = 0; k < 4; ++k)
        for (int r = 0; r < NR; ++r) {
          const int8_t* q = a[r].q + 256 * b + 32 * j;
          s_lo[r] = DotBytesWide(s_lo[r], w[k], BroadcastWord(q + 4 * k));
          s_hi[r] = DotBytesWide(s_hi[r], w[4 + k], BroadcastWord(q + 16 + 4 * k));
        }
      for (int r = 0; r < NR; ++r)
        isum[r] = hn::Add(isum[r], hn::Add(hn::Mul(s_lo[r], scale_lo), hn::Mul(s_hi[r], scale_hi)));
    }
    for (int r = 0; r < NR; ++r) {
      isum[r] = hn::Sub(isum[r], hn::ShiftLeft<5>(PairDots(scale_pairs, a[r].bsums + 16 * b)));
      sum[r] = hn::Add(sum[r], hn::Mul(hn::Mul(hn::Set(df, a[r].d[b]), d), hn::ConvertTo(df, isum[r])));
    }
  }
  for (int r = 0; r < NR; ++r) hn::StoreU(sum[r], df, out + 16 * r);
}

}  // namespace qd
#endif

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
