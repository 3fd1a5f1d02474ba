// The fused kernels for rows interleaved by 8 (tensor/interleave.h) in 256-bit vectors, one
// group's 8 rows in the lanes of each: Q8_0, Q4_0 and Q5_0 (blocks of 32), Q4_K and Q6_K,
// against Q8 activation rows (quant_dot-inl.h).
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_INTERLEAVED_INL_H_
#endif

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/quant_dot_common-inl.h"
#include "kernels/weight_rows.h"
#include "tensor/blocks.h"
#include "tensor/interleave.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // as in quant_dot_common-inl.h
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

#if NANOSERVE_FUSED_QUANT_DOT
namespace qd {

// acc + the byte dot products of w's 8 lanes (4 bytes each) with the 4 activation bytes at q,
// broadcast to every lane.
HWY_INLINE VI32 DotBroadcast(VI32 acc, VU8 w, const int8_t* q) {
  int32_t bytes;
  std::memcpy(&bytes, q, sizeof bytes);
  return DotBytes(acc, w, hn::BitCast(DI8(), hn::Set(DI32(), bytes)));
}

// An interleaved block's 8 chunks against the 32 activation bytes at q, from `init`: lane j
// is row j's exact integer dot product. Two chains, so each waits on half as many predecessors.
HWY_INLINE VI32 DotChunks(const VU8 (&w)[8], const int8_t* q, VI32 init) {
  VI32 s0 = init, s1 = hn::Zero(DI32());
  for (int k = 0; k < 8; k += 2) {
    s0 = DotBroadcast(s0, w[k], q + 4 * k);
    s1 = DotBroadcast(s1, w[k + 1], q + 4 * k + 4);
  }
  return hn::Add(s0, s1);
}

// DotChunks from 0 for chunks whose odd ones hold 16 × their levels (high nibbles masked in
// place: one operation a vector fewer than shifting them down). The odd chain's sum, a multiple
// of 16, is divided back exactly.
HWY_INLINE VI32 DotChunksOddTimes16(const VU8 (&w)[8], const int8_t* q) {
  VI32 s0 = hn::Zero(DI32()), s1 = hn::Zero(DI32());
  for (int k = 0; k < 8; k += 2) {
    s0 = DotBroadcast(s0, w[k], q + 4 * k);
    s1 = DotBroadcast(s1, w[k + 1], q + 4 * k + 4);
  }
  return hn::Add(s0, hn::ShiftRight<4>(s1));
}

// The 8 fp16 at p (an interleaved block's per-row scales) as floats.
HWY_INLINE VF HalvesToFloats(const uint8_t* p) {
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
}

// Per lane, Σ_j pair_j · (bsums[2j], bsums[2j + 1]) for the int16 pairs in each lane of
// pairs[j]: one pairwise multiply-add per j against the activation's two 16-element sums of
// sub-block j, broadcast. Exact in int32. V: 8 int32 lanes (one group), or 16 (two groups,
// AVX-512 VNNI only).
template <class V>
HWY_INLINE V PairDots(const V (&pairs)[8], const int16_t* bsums) {
  const hn::DFromV<V> d;
  V sum = hn::Zero(d);
  for (int j = 0; j < 8; ++j) {
    int32_t pair;
    std::memcpy(&pair, bsums + 2 * j, sizeof pair);
    const V b = hn::Set(d, pair);
    if constexpr (hn::MaxLanes(d) == 8) sum = hn::Add(sum, V{_mm256_madd_epi16(pairs[j].raw, b.raw)});
#if HWY_TARGET == HWY_AVX3_DL
    else sum = hn::Add(sum, V{_mm512_madd_epi16(pairs[j].raw, b.raw)});
#endif
  }
  return sum;
}

// The unsigned levels u of chunks 2m and 2m + 1 of an interleaved block (tensor/interleave.h).
template <class Block>
HWY_INLINE void InterleavedChunks(const uint8_t* block, int m, VU8& even, VU8& odd) {
  const DU8 du;
  const uint8_t* levels = block + 2 * tensor::kInterleaveRows;
  if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    even = hn::LoadU(du, levels + 64 * m);
    odd = hn::LoadU(du, levels + 64 * m + 32);
  } else {
    const VU8 nibbles = hn::LoadU(du, levels + 32 * m);
    even = Nibbles<0>(nibbles);
    odd = Nibbles<4>(nibbles);
    if constexpr (std::is_same_v<Block, tensor::BlockQ5_0>) {  // fifth bits: one 32-bit word per chunk
      const uint8_t* bits = levels + 128 + 8 * m;
      even = hn::Or(even, hn::IfThenElseZero(hn::LoadMaskBits(du, bits), hn::Set(du, 16)));
      odd = hn::Or(odd, hn::IfThenElseZero(hn::LoadMaskBits(du, bits + 4), hn::Set(du, 16)));
    }
  }
}

// log2 of the offset that makes Block's levels unsigned (u = level + 2^k).
template <class Block>
constexpr int kLevelOffsetLog2 = std::is_same_v<Block, tensor::BlockQ8_0> ? 7 : std::is_same_v<Block, tensor::BlockQ5_0> ? 4 : 3;

// Rows of blocks of 32 interleaved by 8 (tensor/interleave.h) × NR activation rows: out[r * 8
// + j] is the dot product of the group's row j with activation row r. The group's block b lies
// at group + b * stride; with H = 2, `group` is a pair (stride: two blocks) whose second
// group's rows go to out[r * 16 + 8 + j], both read in one pass. minus_128_sums: per
// activation row (n / 32 apart), −128 × each block's level sum; shifted down it takes off
// the offset of the weights' unsigned levels (2^k × Σ a, exactly, as −128·Σa is a multiple
// of 128). Lane j of every vector belongs to row j, so a block costs 8 byte dot products per
// activation row (4 activation bytes broadcast against a 32-byte chunk) and one float step
// for all 8 rows, in the reference's order: sum += (dw * da) * s block after block, so the
// result equals it bit for bit.
template <class Block, int NR, int H>
void DotBlock32x8(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                  const int32_t* minus_128_sums, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(Block);
  constexpr int kShift = 7 - kLevelOffsetLog2<Block>;
  VF acc[H][NR];
  for (auto& half : acc)
    for (auto& v : half) v = hn::Zero(DF());
  for (int64_t b = 0; b < n / 32; ++b) {
    for (int g = 0; g < H; ++g) {
      const uint8_t* block = group + g * kBlockBytes + b * stride;
      PrefetchAhead<kBlockBytes, Ahead::kL2>(block, end);
      const VF dw = HalvesToFloats(block);
      VU8 w[8];
      for (int m = 0; m < 4; ++m) InterleavedChunks<Block>(block, m, w[2 * m], w[2 * m + 1]);
      for (int r = 0; r < NR; ++r) {
        const VI32 s = DotChunks(w, a[r].q + 32 * b, hn::Set(DI32(), minus_128_sums[r * (n / 32) + b] >> kShift));
        acc[g][r] = hn::Add(acc[g][r], hn::Mul(hn::ConvertTo(DF(), s), hn::Mul(dw, hn::Set(DF(), a[r].d[b]))));
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < H; ++g) hn::StoreU(acc[g][r], DF(), out + 8 * (H * r + g));
}

// The 64 scales and mins of an interleaved Q4_K super-block (index 8 × sub-block + row) from
// their low and high bits.
HWY_INLINE void Q4_KScalesMins(const uint8_t* block, uint8_t* sc, uint8_t* mn) {
  const DU8 du;
  for (int half = 0; half < 2; ++half) {
    const VU8 low = hn::LoadU(du, block + 32 + 32 * half), high_bits = hn::LoadU(du, block + 96);
    const VU8 high = half == 0 ? hn::And(high_bits, hn::Set(du, 0x0f)) : hn::ShiftRight<4>(high_bits);
    hn::Store(hn::Or(hn::And(low, hn::Set(du, 0x0f)), hn::ShiftLeft<4>(hn::And(high, hn::Set(du, 3)))), du,
              sc + 32 * half);
    hn::Store(hn::Or(hn::ShiftRight<4>(low), hn::ShiftLeft<4>(hn::ShiftRight<2>(high))), du, mn + 32 * half);
  }
}

// The 8 bytes at p (one per lane) as int16 pairs (m, m): the bytes in both 128-bit halves, then
// one shuffle places each twice, zero-extended.
HWY_INLINE VI32 MinPairs(const uint8_t* p) {
  const DU8 du;
  uint64_t bytes;
  std::memcpy(&bytes, p, sizeof bytes);
  constexpr uint8_t z = 0x80;  // a shuffle index that gives 0
  alignas(32) static constexpr uint8_t kTwice[32] = {0, z, 0, z, 1, z, 1, z, 2, z, 2, z, 3, z, 3, z,
                                                     4, z, 4, z, 5, z, 5, z, 6, z, 6, z, 7, z, 7, z};
  const VU8 src = hn::BitCast(du, hn::Set(hn::Full256<uint64_t>(), bytes));
  return hn::BitCast(DI32(), hn::TableLookupBytesOr0(src, hn::Load(du, kTwice)));
}

// Q4_K rows interleaved by 8 (tensor/interleave.h) × NR Q8_K activation rows: out[r * 8 + j]
// is the dot product of the group's row j with activation row r; group, stride and H as for
// DotBlock32x8. Per super-block and lane (row), as the reference: an exact integer sum
// Σ_j sc_j · (levels_j · a_j) and one of the mins, Σ_j m_j · (a's sum over sub-block j), then
// sum += (da · d) · isum and sum_mins += (da · dmin) · msum; so the result equals the
// reference bit for bit.
template <int NR, int H>
void DotQ4_Kx8(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(tensor::BlockQ4_K);
  const DU8 du;
  const hn::Rebind<uint8_t, DI32> du8x8;
  VF sum[H][NR], sum_mins[H][NR];
  for (int g = 0; g < H; ++g)
    for (int r = 0; r < NR; ++r) sum[g][r] = sum_mins[g][r] = hn::Zero(DF());
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int g = 0; g < H; ++g) {
      const uint8_t* block = group + g * kBlockBytes + b * stride;
      PrefetchAhead<128, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 128 bytes of levels in its turn
      const VF d = HalvesToFloats(block), dmin = HalvesToFloats(block + 16);
      HWY_ALIGN uint8_t sc[64], mn[64];
      Q4_KScalesMins(block, sc, mn);
      VI32 isum[NR];
      for (auto& v : isum) v = hn::Zero(DI32());
      for (int j = 0; j < 8; ++j) {
        PrefetchAhead<128, Ahead::kL1AndL2>(block + 128 + 128 * j, end);
        VU8 w[8];
        for (int m = 0; m < 4; ++m) {
          const VU8 nibbles = hn::LoadU(du, block + 128 + 128 * j + 32 * m);
          w[2 * m] = Nibbles<0>(nibbles);
          w[2 * m + 1] = hn::And(nibbles, hn::Set(du, 0xf0));
        }
        const VI32 scale = hn::PromoteTo(DI32(), hn::LoadU(du8x8, sc + 8 * j));
        for (int r = 0; r < NR; ++r)
          isum[r] = hn::Add(isum[r], hn::Mul(DotChunksOddTimes16(w, a[r].q + 256 * b + 32 * j), scale));
      }
      // Each lane's min as the int16 pair (m, m): one pairwise multiply-add with the pair of
      // the activation's 16-element sums gives m_j × its sum over sub-block j.
      VI32 min_pairs[8];
      for (int j = 0; j < 8; ++j) {
        min_pairs[j] = MinPairs(mn + 8 * j);
      }
      for (int r = 0; r < NR; ++r) {
        const VI32 msum = PairDots(min_pairs, a[r].bsums + 16 * b);
        const VF da = hn::Set(DF(), a[r].d[b]);
        sum[g][r] = hn::Add(sum[g][r], hn::Mul(hn::Mul(da, d), hn::ConvertTo(DF(), isum[r])));
        sum_mins[g][r] = hn::Add(sum_mins[g][r], hn::Mul(hn::Mul(da, dmin), hn::ConvertTo(DF(), msum)));
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < H; ++g) hn::StoreU(hn::Sub(sum[g][r], sum_mins[g][r]), DF(), out + 8 * (H * r + g));
}

// Q6_K rows interleaved by 8 (tensor/interleave.h) × NR Q8_K activation rows: out[r * 8 + j]
// is the dot product of the group's row j with activation row r; group, stride and H as for
// DotBlock32x8. The levels go in unsigned
// (u = level + 32); per super-block and lane (row) the integer sum is
// Σ_g sc_g · (u_g · a_g) − 32 · Σ_g sc_g · (a's sum over group g) = Σ_g sc_g · (level_g · a_g),
// exactly, then sum += (da · d) · isum as in the reference, so the result equals it bit for bit.
template <int NR, int H>
void DotQ6_Kx8(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a, float* out) {
  constexpr size_t kBlockBytes = tensor::kInterleaveRows * sizeof(tensor::BlockQ6_K);
  const DU8 du;
  const DI16 d16;
  const hn::Full128<int8_t> d8x16;
  VF sum[H][NR];
  for (auto& half : sum)
    for (auto& v : half) v = hn::Zero(DF());
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int g = 0; g < H; ++g) {
      const uint8_t* block = group + g * kBlockBytes + b * stride;
      PrefetchAhead<144, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 192 bytes of levels in its turn
      const VF d = HalvesToFloats(block);
      // Scale pairs of sub-block j: lane (row) holds scales 2j and 2j + 1 as two int16.
      VI32 scale_pairs[8];
      for (int j = 0; j < 8; ++j) {
        const auto* scales = reinterpret_cast<const int8_t*>(block + 16 + 16 * j);
        scale_pairs[j] = hn::BitCast(DI32(), hn::PromoteTo(d16, hn::LoadU(d8x16, scales)));
      }
      VI32 isum[NR];
      for (auto& v : isum) v = hn::Zero(DI32());
      for (int j = 0; j < 8; ++j) {
        const uint8_t* levels = block + 144 + 192 * j;
        PrefetchAhead<192, Ahead::kL1AndL2>(levels, end);
        VU8 w[8];
        for (int m = 0; m < 4; ++m) {
          const VU8 nibbles = hn::LoadU(du, levels + 32 * m);
          w[2 * m] = Nibbles<0>(nibbles);
          w[2 * m + 1] = Nibbles<4>(nibbles);
        }
        for (int v = 0; v < 2; ++v) {
          const VU8 top = hn::LoadU(du, levels + 128 + 32 * v);
          for (int h = 0; h < 4; ++h) w[4 * v + h] = WithTopBits(w[4 * v + h], top, h);
        }
        const VI32 pairs = scale_pairs[j];
        const VI32 scale_lo = hn::ShiftRight<16>(hn::ShiftLeft<16>(pairs)), scale_hi = hn::ShiftRight<16>(pairs);
        for (int r = 0; r < NR; ++r) {
          const int8_t* q = a[r].q + 256 * b + 32 * j;
          VI32 s_lo = hn::Zero(DI32()), s_hi = hn::Zero(DI32());  // elements 0..15 and 16..31
          for (int k = 0; k < 4; ++k) {
            s_lo = DotBroadcast(s_lo, w[k], q + 4 * k);
            s_hi = DotBroadcast(s_hi, w[4 + k], q + 16 + 4 * k);
          }
          isum[r] = hn::Add(isum[r], hn::Add(hn::Mul(s_lo, scale_lo), hn::Mul(s_hi, scale_hi)));
        }
      }
      for (int r = 0; r < NR; ++r) {
        isum[r] = hn::Sub(isum[r], hn::ShiftLeft<5>(PairDots(scale_pairs, a[r].bsums + 16 * b)));
        sum[g][r] = hn::Add(sum[g][r], hn::Mul(hn::Mul(hn::Set(DF(), a[r].d[b]), d), hn::ConvertTo(DF(), isum[r])));
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < H; ++g) hn::StoreU(sum[g][r], DF(), out + 8 * (H * r + g));
}

// The interleaved kernel for Block's rows: Q4_K's, Q6_K's, or the one for blocks of 32.
template <class Block, int NR, int H>
HWY_INLINE void InterleavedKernel(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n,
                                  const Q8Row* a, const int32_t* minus_128_sums, float* out) {
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K>) DotQ4_Kx8<NR, H>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockQ6_K>) DotQ6_Kx8<NR, H>(group, stride, end, n, a, out);
  else DotBlock32x8<Block, NR, H>(group, stride, end, n, a, minus_128_sums, out);
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
