// The fused kernels for rows interleaved by 8 (tensor/interleave.h) against Q8 activation
// rows on AVX-512 VNNI (the other targets' are in quant_dot_pairs-inl.h, built on the
// helpers here): Q8_0, Q4_0, Q5_0, IQ4_NL and MXFP4 (blocks of 32), Q4_K, Q6_K and IQ4_XS. Each computes H × G groups: H
// vectors of lanes one after the other, each holding G groups side by side
// (quant_dot_lanes-inl.h), so one template serves one group (H = G = 1) and a pair read as
// two groups of 8 lanes (H = 2) or as one of 16 (G = 2).
//
// Lane j of every vector belongs to row j, so a block costs 8 byte dot products per
// activation row (4 activation bytes broadcast against a 32-byte chunk) and one float step
// for all the rows of a vector, in the reference's order (sum += (dw · da) · s block after
// block, per super-block for the K-quants): the results equal the reference bit for bit.
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
#include "kernels/quant_dot_lanes-inl.h"
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

// ---- Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4 -------------------------------------------------------
// out[8G(H r + h) + 8g + j] is the dot product of row j of the g-th group of the h-th vector
// with activation row r. The groups' block b lies at group + b * stride, the h-th vector's
// G groups one after the other from group + h · G · (a block's bytes). minus_128_sums: per
// activation row (n / 32 apart), −128 × each block's level sum; shifted down it takes off
// the offset of the weights' unsigned levels (2^k × Σ a, exactly, as −128·Σa is a multiple
// of 128).
template <class Block, int NR, int H, int G>
void DotBlock32Interleaved(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                           const int32_t* minus_128_sums, float* out) {
  using L = Lanes<Block, G>;
  constexpr int kShift = 7 - kLevelOffsetLog2<Block>;
  const DG<int32_t, G> di;
  const DG<float, G> df;
  VG<float, G> acc[H][NR];
  for (auto& part : acc)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 32; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * G * L::kBytes + b * stride;
      PrefetchAhead<G * L::kBytes, Ahead::kL2>(block, end);
      const auto dw = BlockScales<Block, G>(block);
      VG<uint8_t, G> w[8];
      for (int m = 0; m < 4; ++m) Block32Chunks<Block, G>(block, m, w[2 * m], w[2 * m + 1]);
      const int32_t* sums = minus_128_sums + b;  // row r's at sums[r * (n / 32)]
      if constexpr (G == 1) {
        for (int r = 0; r < NR; ++r) {
          const auto s = DotChunks(w, a[r].q + 32 * b, hn::Set(di, sums[r * (n / 32)] >> kShift));
          acc[h][r] = AddScaled(acc[h][r], s, dw, a[r].d[b]);
        }
      } else {
        // One chain per row, the rows' steps interleaved: NR chains in flight, in the order
        // the scheduler sees them (faster here than DotChunks' two chains a row).
        VG<int32_t, G> s[NR];
        for (int r = 0; r < NR; ++r) s[r] = hn::Set(di, sums[r * (n / 32)] >> kShift);
        for (int k = 0; k < 8; ++k)
          for (int r = 0; r < NR; ++r) s[r] = DotBroadcast(s[r], w[k], a[r].q + 32 * b + 4 * k);
        for (int r = 0; r < NR; ++r) acc[h][r] = AddScaled(acc[h][r], s[r], dw, a[r].d[b]);
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(acc[h][r], df, out + 8 * G * (H * r + h));
}

// ---- Q4_K ---------------------------------------------------------------------------------
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

// Sub-block j's scales (or mins) of each group's 64, one per lane, zero-extended.
template <int G>
HWY_INLINE VG<int32_t, G> SubBlockBytes(const uint8_t (&bytes)[G][64], int j) {
  const auto eight = PerGroup<G>([&](int g) { return hn::LoadU(hn::Full64<uint8_t>(), bytes[g] + 8 * j); });
  return hn::PromoteTo(DG<int32_t, G>(), eight);
}

// Sub-block j's mins (or scales) of each group's 64, each lane's as the int16 pair (m, m): per
// group the 8 bytes in both 128-bit halves, then one shuffle places each twice, zero-extended.
template <int G>
HWY_INLINE VG<int32_t, G> BytePairs(const uint8_t (&mins)[G][64], int j) {
  const DU8 du;
  constexpr uint8_t z = 0x80;  // a shuffle index that gives 0
  alignas(32) static constexpr uint8_t kTwice[32] = {0, z, 0, z, 1, z, 1, z, 2, z, 2, z, 3, z, 3, z,
                                                     4, z, 4, z, 5, z, 5, z, 6, z, 6, z, 7, z, 7, z};
  const auto pairs = PerGroup<G>([&](int g) {
    uint64_t bytes;
    std::memcpy(&bytes, mins[g] + 8 * j, sizeof bytes);
    const VU8 src = hn::BitCast(du, hn::Set(hn::Full256<uint64_t>(), bytes));
    return hn::TableLookupBytesOr0(src, hn::Load(du, kTwice));
  });
  return hn::BitCast(DG<int32_t, G>(), pairs);
}

// A Q4_K super-block's float step for NR activation rows, as the reference's: sum +=
// (da · d) · isum and sum_mins += (da · dmin) · msum, msum = Σ_j m_j × (a's sum over sub-block
// j), where each lane's min as the int16 pair (m, m) makes one pairwise multiply-add with the
// pair of the activation's 16-element sums of sub-block j.
template <int G, int NR>
HWY_INLINE void Q4_KFloatStep(const uint8_t* block, const uint8_t (&mn)[G][64], const VG<int32_t, G> (&isum)[NR],
                              const Q8Row* a, int64_t b, VG<float, G> (&sum)[NR], VG<float, G> (&sum_mins)[NR]) {
  using L = Lanes<tensor::BlockQ4_K, G>;
  const DG<float, G> df;
  const auto d = L::Floats(block), dmin = L::Floats(block + 16);
  VG<int32_t, G> min_pairs[8];
  for (int j = 0; j < 8; ++j) min_pairs[j] = BytePairs(mn, j);
  for (int r = 0; r < NR; ++r) {
    const auto msum = PairDots(min_pairs, a[r].bsums + 16 * b);
    const auto da = hn::Set(df, a[r].d[b]);
    sum[r] = hn::Add(sum[r], hn::Mul(hn::Mul(da, d), hn::ConvertTo(df, isum[r])));
    sum_mins[r] = hn::Add(sum_mins[r], hn::Mul(hn::Mul(da, dmin), hn::ConvertTo(df, msum)));
  }
}

// Per super-block and lane (row), as the reference: an exact integer sum
// Σ_j sc_j · (levels_j · a_j) and one of the mins, Σ_j m_j · (a's sum over sub-block j), then
// sum += (da · d) · isum and sum_mins += (da · dmin) · msum. Outputs, group, stride: as for
// DotBlock32Interleaved.
template <int NR, int H, int G>
void DotQ4_KInterleaved(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                        float* out) {
  using L = Lanes<tensor::BlockQ4_K, G>;
  const DG<uint8_t, G> du;
  const DG<int32_t, G> di;
  const DG<float, G> df;
  VG<float, G> sum[H][NR], sum_mins[H][NR];
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < NR; ++r) sum[h][r] = sum_mins[h][r] = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * G * L::kBytes + b * stride;
      PrefetchEach<L, 128, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 128 bytes of levels in its turn
      HWY_ALIGN uint8_t sc[G][64], mn[G][64];
      for (int g = 0; g < G; ++g) Q4_KScalesMins(block + g * L::kBytes, sc[g], mn[g]);
      VG<int32_t, G> isum[NR];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        PrefetchEach<L, 128, Ahead::kL1AndL2>(block + 128 + 128 * j, end);
        VG<uint8_t, G> w[8];
        for (int m = 0; m < 4; ++m) {
          const auto nibbles = L::Load(block + 128 + 128 * j + 32 * m);
          w[2 * m] = Nibbles<0>(nibbles);
          w[2 * m + 1] = hn::And(nibbles, hn::Set(du, 0xf0));
        }
        const auto scale = SubBlockBytes(sc, j);
        for (int r = 0; r < NR; ++r)
          isum[r] = hn::Add(isum[r], hn::Mul(DotChunks<4>(w, a[r].q + 256 * b + 32 * j, hn::Zero(di)), scale));
      }
      Q4_KFloatStep(block, mn, isum, a, b, sum[h], sum_mins[h]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(hn::Sub(sum[h][r], sum_mins[h][r]), df, out + 8 * G * (H * r + h));
}

// ---- Q6_K ---------------------------------------------------------------------------------
// The scales of an interleaved Q6_K super-block by sub-block j of 32: each lane (row) holds its
// scales 2j and 2j + 1 as two int16.
template <int G>
HWY_INLINE void Q6_KScalePairs(const uint8_t* block, VG<int32_t, G> (&scale_pairs)[8]) {
  using L = Lanes<tensor::BlockQ6_K, G>;
  const hn::Full128<int8_t> d8x16;
  for (int j = 0; j < 8; ++j) {
    scale_pairs[j] = PerGroup<G>([&](int g) {
      const auto* scales = reinterpret_cast<const int8_t*>(block + g * L::kBytes + 16 + 16 * j);
      return hn::BitCast(DI32(), hn::PromoteTo(DI16(), hn::LoadU(d8x16, scales)));
    });
  }
}

// A Q6_K super-block's float step for NR activation rows: the levels' offset of 32 off each
// integer sum (32 × Σ_g sc_g × a's sum over group g), then sum += (da · d) · isum.
template <int G, int NR>
HWY_INLINE void Q6_KFloatStep(const uint8_t* block, const VG<int32_t, G> (&scale_pairs)[8], VG<int32_t, G> (&isum)[NR],
                              const Q8Row* a, int64_t b, VG<float, G> (&sum)[NR]) {
  const DG<float, G> df;
  const auto d = Lanes<tensor::BlockQ6_K, G>::Floats(block);
  for (int r = 0; r < NR; ++r) {
    isum[r] = hn::Sub(isum[r], hn::ShiftLeft<5>(PairDots(scale_pairs, a[r].bsums + 16 * b)));
    sum[r] = hn::Add(sum[r], hn::Mul(hn::Mul(hn::Set(df, a[r].d[b]), d), hn::ConvertTo(df, isum[r])));
  }
}

// The levels go in unsigned (u = level + 32); per super-block and lane (row) the integer sum
// is Σ_g sc_g · (u_g · a_g) − 32 · Σ_g sc_g · (a's sum over group g) = Σ_g sc_g · (level_g · a_g),
// exactly, then sum += (da · d) · isum as in the reference. Outputs, group, stride: as for
// DotBlock32Interleaved.
template <int NR, int H, int G>
void DotQ6_KInterleaved(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                        float* out) {
  using L = Lanes<tensor::BlockQ6_K, G>;
  const DG<int32_t, G> di;
  const DG<float, G> df;
  VG<float, G> sum[H][NR];
  for (auto& part : sum)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * G * L::kBytes + b * stride;
      PrefetchEach<L, 144, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 192 bytes of levels in its turn
      VG<int32_t, G> scale_pairs[8];
      Q6_KScalePairs<G>(block, scale_pairs);
      VG<int32_t, G> isum[NR];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        const uint8_t* levels = block + 144 + 192 * j;
        PrefetchEach<L, 192, Ahead::kL1AndL2>(levels, end);
        VG<uint8_t, G> w[8];
        for (int m = 0; m < 4; ++m) {
          const auto nibbles = L::Load(levels + 32 * m);
          w[2 * m] = Nibbles<0>(nibbles);
          w[2 * m + 1] = Nibbles<4>(nibbles);
        }
        for (int v = 0; v < 2; ++v) {
          const auto top = L::Load(levels + 128 + 32 * v);
          for (int t = 0; t < 4; ++t) w[4 * v + t] = WithTopBits(w[4 * v + t], top, t);
        }
        const auto pairs = scale_pairs[j];
        const auto scale_lo = hn::ShiftRight<16>(hn::ShiftLeft<16>(pairs)), scale_hi = hn::ShiftRight<16>(pairs);
        for (int r = 0; r < NR; ++r) {
          const int8_t* q = a[r].q + 256 * b + 32 * j;
          auto s_lo = hn::Zero(di), s_hi = hn::Zero(di);  // elements 0..15 and 16..31
          for (int k = 0; k < 4; ++k) {
            s_lo = DotBroadcast(s_lo, w[k], q + 4 * k);
            s_hi = DotBroadcast(s_hi, w[4 + k], q + 16 + 4 * k);
          }
          isum[r] = hn::Add(isum[r], hn::Add(hn::Mul(s_lo, scale_lo), hn::Mul(s_hi, scale_hi)));
        }
      }
      Q6_KFloatStep<G, NR>(block, scale_pairs, isum, a, b, sum[h]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(sum[h][r], df, out + 8 * G * (H * r + h));
}

// ---- IQ4_XS -------------------------------------------------------------------------------
// The levels go in as their table's entries + 128 (unsigned); per super-block and lane (row)
// the integer sum is Σ_j sc_j · (u_j · a_j) − 128 · Σ_j sc_j · (a's sum over sub-block j) =
// Σ_j sc_j · (level_j · a_j), exactly (|each term| < 2^31 / 4), then sum += (da · d) · isum
// as in the reference. Outputs, group, stride: as for DotBlock32Interleaved.
template <int NR, int H, int G>
void DotIQ4_XSInterleaved(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                          float* out) {
  using Block = tensor::BlockIQ4_XS;
  using L = Lanes<Block, G>;
  const DG<int32_t, G> di;
  const DG<float, G> df;
  VG<float, G> sum[H][NR];
  for (auto& part : sum)
    for (auto& v : part) v = hn::Zero(df);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int h = 0; h < H; ++h) {
      const uint8_t* block = group + h * G * L::kBytes + b * stride;
      PrefetchEach<L, 64, Ahead::kL1AndL2>(block, end);  // scales; each sub-block's 128 bytes of levels in its turn
      HWY_ALIGN int8_t sc[G][64];
      for (int g = 0; g < G; ++g) IQ4_XSScales(block + g * L::kBytes, sc[g]);
      VG<int32_t, G> isum[NR], scale_pairs[8];
      for (auto& v : isum) v = hn::Zero(di);
      for (int j = 0; j < 8; ++j) {
        PrefetchEach<L, 128, Ahead::kL1AndL2>(block + 64 + 128 * j, end);
        VG<uint8_t, G> w[8];
        for (int m = 0; m < 4; ++m) {
          const auto nibbles = L::Load(block + 64 + 128 * j + 32 * m);
          w[2 * m] = UnsignedLevels<Block>(Nibbles<0>(nibbles));
          w[2 * m + 1] = UnsignedLevels<Block>(Nibbles<4>(nibbles));
        }
        const auto scale = SubBlockScales<G>(sc, j);
        scale_pairs[j] = ScalePairs(scale);
        for (int r = 0; r < NR; ++r)
          isum[r] = hn::Add(isum[r], hn::Mul(DotChunks(w, a[r].q + 256 * b + 32 * j, hn::Zero(di)), scale));
      }
      const auto d = L::Floats(block);
      for (int r = 0; r < NR; ++r) {
        const auto offset = hn::ShiftLeft<7>(PairDots(scale_pairs, a[r].bsums + 16 * b));
        const auto exact = hn::Sub(isum[r], offset);
        sum[h][r] = hn::Add(sum[h][r], hn::Mul(hn::Mul(hn::Set(df, a[r].d[b]), d), hn::ConvertTo(df, exact)));
      }
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int h = 0; h < H; ++h) hn::StoreU(sum[h][r], df, out + 8 * G * (H * r + h));
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
