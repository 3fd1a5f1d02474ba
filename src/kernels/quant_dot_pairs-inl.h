// The interleaved kernels (quant_dot_interleaved-inl.h) for the targets without VNNI (AVX2,
// AVX3): each byte dot product as vpmaddubsw's int16 pair sums, which several chunks add up in
// 16 bits before one widening, where DotBytes' exact emulation takes two 16-bit multiply-adds
// and the activation bytes widened for every chunk and row.
//
// vpmaddubsw saturates, so each use keeps its int16 sums below 2^15 from the levels' ranges
// (activation bytes are in [-127, 127], quantize_q8 makes no -128):
//   Q4_0 (u ≤ 15): a chunk's pair ≤ 2 · 15 · 128 = 3840, all 8 chunks of a block 30720;
//   Q5_0 (u ≤ 31): 7936 a chunk, 4 chunks 31744;
//   Q8_0: u = level + 128 reaches 255 (2 · 255 · 127 would saturate), so the signed levels go
//         in as |level| ≤ 128 against the activation bytes with the level's sign, ≤ 2 · 128 · 127
//         = 32512 a chunk, widened chunk by chunk; the offset then needs no correction. IQ4_NL,
//         MXFP4 and IQ4_XS (table levels, |level| ≤ 127) the same way.
// The integer sums equal DotBlock32Interleaved's, and the float steps are the same: the results
// equal the reference bit for bit. InterleavedKernel, at the end, picks each target's kernel.
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_PAIRS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_PAIRS_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_PAIRS_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_PAIRS_INL_H_
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/quant_dot_common-inl.h"
#include "kernels/quant_dot_interleaved-inl.h"
#include "kernels/quant_dot_lanes-inl.h"
#include "kernels/weight_rows.h"
#include "tensor/blocks.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

#if NANOSERVE_FUSED_QUANT_DOT && HWY_TARGET != HWY_AVX3_DL
namespace qd {

// The 4 activation bytes at q in every int32 lane.
HWY_INLINE VI8 Broadcast4(const int8_t* q) {
  int32_t bytes;
  std::memcpy(&bytes, q, sizeof bytes);
  return hn::BitCast(DI8(), hn::Set(DI32(), bytes));
}

// Chunks of Block whose int16 pair sums add up in 16 bits before widening (see above).
template <class Block>
constexpr int kChunksPerWidening =
    std::is_same_v<Block, tensor::BlockQ8_0> ? 1 : std::is_same_v<Block, tensor::BlockQ5_0> ? 4 : 8;

// As DotBlock32Interleaved with G = 1: out[8(H r + h) + j] is row j of the h-th group's dot
// product with activation row r.
template <class Block, int NR, int H>
void DotBlock32Pairs(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                     const int32_t* minus_128_sums, float* out) {
  using L = Lanes<Block, 1>;
  // Q8_0's levels and the tables' (u = level + 128) go in signed, as the header says.
  constexpr bool kQ8 = std::is_same_v<Block, tensor::BlockQ8_0> || kTableBlock<Block>;
  constexpr int kRun = kChunksPerWidening<Block>;
  constexpr int kShift = 7 - kLevelOffsetLog2<Block>;
  const DI32 di;
  const DF df;
  VF acc[H][NR];
  for (auto& part : acc)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 32; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * L::kBytes + b * stride;
      PrefetchAhead<L::kBytes, Ahead::kL2>(block, end);
      const int8_t* q[NR];
      VI32 s[NR];  // Q4_0, Q5_0: from the offset's correction, as DotBlock32Interleaved's
      for (int r = 0; r < NR; ++r) {
        q[r] = a[r].q + 32 * b;
        s[r] = kQ8 ? hn::Zero(di) : hn::Set(di, minus_128_sums[b + r * (n / 32)] >> kShift);
      }
      [[maybe_unused]] VI16 pairs[NR];  // Q4_0, Q5_0: the chunks' int16 sums before widening
      for (int m = 0; m < 4; ++m) {
        VU8 chunk[2];
        Block32Chunks<Block, 1>(block, m, chunk[0], chunk[1]);
        for (int c = 0; c < 2; ++c) {
          const int k = 2 * m + c;
          if constexpr (kQ8) {
            const VI8 levels = hn::BitCast(DI8(), hn::Xor(chunk[c], hn::Set(DU8(), 0x80)));
            const VU8 magnitudes = hn::BitCast(DU8(), hn::Abs(levels));  // -128 as 128
            for (int r = 0; r < NR; ++r)
              s[r] = hn::Add(s[r], WidenPairs(PairSums(magnitudes, WithSignOf(Broadcast4(q[r] + 4 * k), levels))));
          } else {
            for (int r = 0; r < NR; ++r) {
              const VI16 p = PairSums(chunk[c], Broadcast4(q[r] + 4 * k));
              pairs[r] = k % kRun == 0 ? p : hn::Add(pairs[r], p);
              if (k % kRun == kRun - 1) s[r] = hn::Add(s[r], WidenPairs(pairs[r]));
            }
          }
        }
      }
      const VF dw = BlockScales<Block, 1>(block);
      for (int r = 0; r < NR; ++r) acc[h][r] = AddScaled(acc[h][r], s[r], dw, a[r].d[b]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(acc[h][r], df, out + 8 * (H * r + h));
}

// ---- Q4_K ---------------------------------------------------------------------------------
// As DotQ4_KInterleaved with G = 1. A sub-block's 8 chunks (u ≤ 15) add up in 16 bits, and one
// vpmaddwd by each lane's scale as the int16 pair (sc, sc) widens and scales them at once:
// sc · Σ, exact (63 · 30720 · 2 < 2^31), where the emulation took a 32-bit multiply.
template <int NR, int H>
void DotQ4_KPairs(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                  float* out) {
  using L = Lanes<tensor::BlockQ4_K, 1>;
  const DI16 d16;
  const DI32 di;
  const DF df;
  VF sum[H][NR], sum_mins[H][NR];
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < NR; ++r) sum[h][r] = sum_mins[h][r] = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * L::kBytes + b * stride;
      PrefetchEach<L, 128, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 128 bytes of levels in its turn
      HWY_ALIGN uint8_t sc[1][64], mn[1][64];
      Q4_KScalesMins(block, sc[0], mn[0]);
      VI32 isum[NR];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        PrefetchEach<L, 128, Ahead::kL1AndL2>(block + 128 + 128 * j, end);
        VI16 pairs[NR];
        for (int m = 0; m < 4; ++m) {
          const VU8 nibbles = L::Load(block + 128 + 128 * j + 32 * m);
          const VU8 even = Nibbles<0>(nibbles), odd = Nibbles<4>(nibbles);
          for (int r = 0; r < NR; ++r) {
            const int8_t* q = a[r].q + 256 * b + 32 * j + 8 * m;
            const VI16 p = hn::Add(PairSums(even, Broadcast4(q)), PairSums(odd, Broadcast4(q + 4)));
            pairs[r] = m == 0 ? p : hn::Add(pairs[r], p);
          }
        }
        const VI16 scale = hn::BitCast(d16, BytePairs(sc, j));
        for (int r = 0; r < NR; ++r) isum[r] = hn::Add(isum[r], MulAddPairs(pairs[r], scale));
      }
      Q4_KFloatStep(block, mn, isum, a, b, sum[h], sum_mins[h]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(hn::Sub(sum[h][r], sum_mins[h][r]), df, out + 8 * (H * r + h));
}

// ---- Q6_K ---------------------------------------------------------------------------------
// Each int32 lane's low (kHigh false) or high int16 as the pair (s, s).
template <bool kHigh>
HWY_INLINE VI16 HalfTwice(VI32 pairs) {
  const hn::Full256<uint32_t> du;
  const auto u = hn::BitCast(du, pairs);
  const auto half = kHigh ? hn::ShiftRight<16>(u) : hn::And(u, hn::Set(du, 0xffffu));
  return hn::BitCast(DI16(), hn::Or(half, hn::ShiftLeft<16>(half)));
}

// As DotQ6_KInterleaved with G = 1. Levels u ≤ 63: two chunks add up in 16 bits (2 · 16128 <
// 2^15), and vpmaddwd by the lane's scale of those 16 elements as the int16 pair (s, s) widens
// and scales them.
template <int NR, int H>
void DotQ6_KPairs(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                  float* out) {
  using L = Lanes<tensor::BlockQ6_K, 1>;
  const DI32 di;
  const DF df;
  VF sum[H][NR];
  for (auto& part : sum)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * L::kBytes + b * stride;
      PrefetchEach<L, 144, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 192 bytes of levels in its turn
      VI32 scale_pairs[8];
      Q6_KScalePairs<1>(block, scale_pairs);
      VI32 isum[NR];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        const uint8_t* levels = block + 144 + 192 * j;
        PrefetchEach<L, 192, Ahead::kL1AndL2>(levels, end);
        for (int v = 0; v < 2; ++v) {  // chunks 4v..4v+3: elements 16v..16v+15, scale 2j + v
          const VU8 top = L::Load(levels + 128 + 32 * v);
          VU8 w[4];
          for (int t = 0; t < 2; ++t) {
            const VU8 nibbles = L::Load(levels + 64 * v + 32 * t);
            w[2 * t] = WithTopBits(Nibbles<0>(nibbles), top, 2 * t);
            w[2 * t + 1] = WithTopBits(Nibbles<4>(nibbles), top, 2 * t + 1);
          }
          const VI16 scale = v == 0 ? HalfTwice<false>(scale_pairs[j]) : HalfTwice<true>(scale_pairs[j]);
          for (int r = 0; r < NR; ++r) {
            const int8_t* q = a[r].q + 256 * b + 32 * j + 16 * v;
            for (int t = 0; t < 2; ++t) {
              const VI16 p = hn::Add(PairSums(w[2 * t], Broadcast4(q + 8 * t)),
                                     PairSums(w[2 * t + 1], Broadcast4(q + 8 * t + 4)));
              isum[r] = hn::Add(isum[r], MulAddPairs(p, scale));
            }
          }
        }
      }
      Q6_KFloatStep<1, NR>(block, scale_pairs, isum, a, b, sum[h]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(sum[h][r], df, out + 8 * (H * r + h));
}

// ---- IQ4_XS -------------------------------------------------------------------------------
// As DotIQ4_XSInterleaved with G = 1, the levels in signed as Q8_0's (see above): each chunk's
// int16 pair sums, one vpmaddwd by the lane's scale as the pair (sc, sc) widens and scales them.
template <int NR, int H>
void DotIQ4_XSPairs(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                    float* out) {
  using Block = tensor::BlockIQ4_XS;
  using L = Lanes<Block, 1>;
  const DI32 di;
  const DF df;
  VF sum[H][NR];
  for (auto& part : sum)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * L::kBytes + b * stride;
      PrefetchEach<L, 64, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 128 bytes of levels in its turn
      HWY_ALIGN int8_t sc[1][64];
      IQ4_XSScales(block, sc[0]);
      VI32 isum[NR];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        PrefetchEach<L, 128, Ahead::kL1AndL2>(block + 64 + 128 * j, end);
        const VI16 scale = hn::BitCast(DI16(), ScalePairs(SubBlockScales<1>(sc, j)));
        for (int m = 0; m < 4; ++m) {
          const VU8 nibbles = L::Load(block + 64 + 128 * j + 32 * m);
          for (int c = 0; c < 2; ++c) {
            const VU8 u = UnsignedLevels<Block>(c == 0 ? Nibbles<0>(nibbles) : Nibbles<4>(nibbles));
            const VI8 levels = hn::BitCast(DI8(), hn::Xor(u, hn::Set(DU8(), 0x80)));
            const VU8 magnitudes = hn::BitCast(DU8(), hn::Abs(levels));
            for (int r = 0; r < NR; ++r) {
              const int8_t* q = a[r].q + 256 * b + 32 * j + 4 * (2 * m + c);
              isum[r] = hn::Add(isum[r], MulAddPairs(PairSums(magnitudes, WithSignOf(Broadcast4(q), levels)), scale));
            }
          }
        }
      }
      const VF d = L::Floats(block);
      for (int r = 0; r < NR; ++r)
        sum[h][r] = hn::Add(sum[h][r], hn::Mul(hn::Mul(hn::Set(df, a[r].d[b]), d), hn::ConvertTo(df, isum[r])));
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(sum[h][r], df, out + 8 * (H * r + h));
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT && HWY_TARGET != HWY_AVX3_DL

#if NANOSERVE_FUSED_QUANT_DOT
namespace qd {

// The interleaved kernel for Block's rows: Q4_K's, Q6_K's, IQ4_XS's, or the one for blocks of 32; on the
// targets without VNNI, those built on vpmaddubsw above.
template <class Block, int NR, int H, int G>
HWY_INLINE void InterleavedKernel(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n,
                                  const Q8Row* a, const int32_t* minus_128_sums, float* out) {
#if HWY_TARGET != HWY_AVX3_DL
  static_assert(G == 1, "a pair's groups side by side need 512-bit vectors");
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K>)
    DotQ4_KPairs<NR, H>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockQ6_K>)
    DotQ6_KPairs<NR, H>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockIQ4_XS>)
    DotIQ4_XSPairs<NR, H>(group, stride, end, n, a, out);
  else
    DotBlock32Pairs<Block, NR, H>(group, stride, end, n, a, minus_128_sums, out);
#else
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K>)
    DotQ4_KInterleaved<NR, H, G>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockQ6_K>)
    DotQ6_KInterleaved<NR, H, G>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockIQ4_XS>)
    DotIQ4_XSInterleaved<NR, H, G>(group, stride, end, n, a, out);
  else
    DotBlock32Interleaved<Block, NR, H, G>(group, stride, end, n, a, minus_128_sums, out);
#endif
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
