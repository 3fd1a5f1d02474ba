// What the kernels for rows interleaved by 8 (tensor/interleave.h) share: the lanes of one
// group, or of a pair's two groups side by side, and the byte dot products of a block's
// chunks with broadcast activation bytes (quant_dot_interleaved-inl.h).
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_LANES_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_LANES_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_LANES_INL_H_
#endif

#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/quant_dot_common-inl.h"
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

// The interleaved kernels keep row j of the g-th of G groups in int32 lane 8g + j: G = 1 in
// 256-bit vectors, G = 2 (a pair's two groups, AVX3_DL only) in 512-bit ones, where a byte
// dot product does the work of two 256-bit ones for the same instruction count.
template <class T, int G>
using DG = hn::Simd<T, 32 * G / sizeof(T), 0>;
template <class T, int G>
using VG = hn::Vec<DG<T, G>>;

// The vector of G groups whose group g holds part(g), a vector of half its width or less.
template <int G, class F>
HWY_INLINE auto PerGroup(const F& part) {
  static_assert(G == 1 || G == 2);
  if constexpr (G == 1) {
    return part(0);
  } else {
    const hn::DFromV<decltype(part(0))> d;
    return hn::Combine(hn::Twice<decltype(d)>(), part(1), part(0));
  }
}

// The 8 fp16 at p (an interleaved block's per-row scales) as floats.
HWY_INLINE VF HalvesToFloats(const uint8_t* p) {
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
}

// Where the G groups' blocks lie: one after the other (as a pair lays them out), kBytes apart.
// A pointer into the first group's block stands for the same place in each.
template <class Block, int G>
struct Lanes {
  static constexpr int kGroups = G;
  static constexpr size_t kBytes = tensor::kInterleaveRows * sizeof(Block);

  // The 32 bytes at p of each block.
  static HWY_INLINE VG<uint8_t, G> Load(const uint8_t* p) {
    return PerGroup<G>([&](int g) { return hn::LoadU(DU8(), p + g * kBytes); });
  }
  // The 8 fp16 at p of each block, as floats.
  static HWY_INLINE VG<float, G> Floats(const uint8_t* p) {
    return PerGroup<G>([&](int g) { return HalvesToFloats(p + g * kBytes); });
  }
};

// PrefetchAhead of the kLength bytes at p of each block.
template <class L, size_t kLength, Ahead kWhere>
HWY_INLINE void PrefetchEach(const uint8_t* p, const uint8_t* end) {
  PrefetchAhead<kLength, kWhere>(p, end);
  if constexpr (L::kGroups == 2) PrefetchAhead<kLength, kWhere>(p + L::kBytes, end);
}

// acc + the byte dot products of w's lanes (4 bytes each) with the 4 activation bytes at q,
// broadcast to every lane.
template <class VI, class VU>
HWY_INLINE VI DotBroadcast(VI acc, VU w, const int8_t* q) {
  const hn::DFromV<VI> di;
  int32_t bytes;
  std::memcpy(&bytes, q, sizeof bytes);
  return DotBytes(acc, w, hn::BitCast(hn::Repartition<int8_t, decltype(di)>(), hn::Set(di, bytes)));
}

// An interleaved block's 8 chunks against the 32 activation bytes at q, from `init`: lane j
// is row j's exact integer dot product. Two chains, so each waits on half as many
// predecessors. kOddShift = 4 for chunks whose odd ones hold 16 × their levels (high nibbles
// masked in place: one operation a vector fewer than shifting them down): the odd chain's
// sum, a multiple of 16, is divided back exactly.
template <int kOddShift = 0, class VI, class VU>
HWY_INLINE VI DotChunks(const VU (&w)[8], const int8_t* q, VI init) {
  VI s0 = init, s1 = hn::Zero(hn::DFromV<VI>());
  for (int k = 0; k < 8; k += 2) {
    s0 = DotBroadcast(s0, w[k], q + 4 * k);
    s1 = DotBroadcast(s1, w[k + 1], q + 4 * k + 4);
  }
  if constexpr (kOddShift != 0) s1 = hn::ShiftRight<kOddShift>(s1);
  return hn::Add(s0, s1);
}

// Per lane, Σ_j pair_j · (bsums[2j], bsums[2j + 1]) for the int16 pairs in each lane of
// pairs[j]: one pairwise multiply-add per j against the activation's two 16-element sums of
// sub-block j, broadcast. Exact in int32.
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

// ---- Table levels (IQ4_NL, MXFP4, IQ4_XS) -----------------------------------------------
template <class Block>
inline constexpr bool kTableBlock = std::is_same_v<Block, tensor::BlockIQ4_NL> ||
                                    std::is_same_v<Block, tensor::BlockMXFP4> ||
                                    std::is_same_v<Block, tensor::BlockIQ4_XS>;

// A table type's 16 levels + 128 (unsigned bytes, so a byte dot product takes them first),
// repeated in each 128-bit part: vpshufb looks up within each.
template <class Block>
inline constexpr auto kUnsignedLevels = [] {
  const int8_t* levels = std::is_same_v<Block, tensor::BlockMXFP4> ? tensor::kMXFP4Levels : tensor::kIQ4Levels;
  std::array<uint8_t, 64> bytes{};
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<uint8_t>(levels[i % 16] + 128);
  return bytes;
}();

// Table indices (nibbles) as the levels + 128.
template <class Block, class V>
HWY_INLINE V UnsignedLevels(V indices) {
  return hn::TableLookupBytes(hn::LoadU(hn::DFromV<V>(), kUnsignedLevels<Block>.data()), indices);
}

// MXFP4's 8 exponent bytes at p (E8M0, halved as tensor::mxfp4_scale) as floats, exactly: e as a
// float's exponent field is 2^(e - 127) for e ≥ 1, and halving it is exact (2^-127 included);
// e = 0 (2^-128) is the one that needs its own value.
HWY_INLINE VF HalvedPowersOfTwo(const uint8_t* p) {
  const auto e = hn::PromoteTo(DI32(), hn::LoadU(hn::Full64<uint8_t>(), p));
  const VF power = hn::Mul(hn::BitCast(DF(), hn::ShiftLeft<23>(e)), hn::Set(DF(), 0.5f));
  return hn::IfThenElse(hn::RebindMask(DF(), hn::Eq(e, hn::Zero(DI32()))),
                        hn::BitCast(DF(), hn::Set(DI32(), 0x00200000)), power);
}

// ---- Blocks of 32 (Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4) -----------------------------------------
// Bytes of the 8 rows' scales before an interleaved block's levels.
template <class Block>
inline constexpr size_t kScaleBytes = std::is_same_v<Block, tensor::BlockMXFP4> ? 8 : 16;

// The G groups' per-row block scales as floats: fp16s, or MXFP4's exponents.
template <class Block, int G>
HWY_INLINE VG<float, G> BlockScales(const uint8_t* block) {
  if constexpr (std::is_same_v<Block, tensor::BlockMXFP4>)
    return PerGroup<G>([&](int g) { return HalvedPowersOfTwo(block + g * Lanes<Block, G>::kBytes); });
  else
    return Lanes<Block, G>::Floats(block);
}

// The unsigned levels u of chunks 2m and 2m + 1 of the blocks at `block`.
template <class Block, int G>
HWY_INLINE void Block32Chunks(const uint8_t* block, int m, VG<uint8_t, G>& even, VG<uint8_t, G>& odd) {
  using L = Lanes<Block, G>;
  const uint8_t* levels = block + kScaleBytes<Block>;
  if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    even = L::Load(levels + 64 * m);
    odd = L::Load(levels + 64 * m + 32);
  } else {
    const auto nibbles = L::Load(levels + 32 * m);
    even = Nibbles<0>(nibbles);
    odd = Nibbles<4>(nibbles);
    if constexpr (kTableBlock<Block>) {
      even = UnsignedLevels<Block>(even);
      odd = UnsignedLevels<Block>(odd);
    }
    if constexpr (std::is_same_v<Block, tensor::BlockQ5_0>) {  // fifth bits: one 32-bit word per chunk
      const DG<uint8_t, G> du;
      const auto fifth_bits = [&](const uint8_t* p) {
        uint64_t bits = 0;
        for (int g = 0; g < G; ++g) {
          uint32_t word;
          std::memcpy(&word, p + g * L::kBytes, sizeof word);
          bits |= uint64_t{word} << (32 * g);
        }
        return hn::IfThenElseZero(hn::LoadMaskBits(du, reinterpret_cast<const uint8_t*>(&bits)), hn::Set(du, 16));
      };
      even = hn::Or(even, fifth_bits(levels + 128 + 8 * m));
      odd = hn::Or(odd, fifth_bits(levels + 128 + 8 * m + 4));
    }
  }
}

// log2 of the offset that makes Block's levels unsigned (u = level + 2^k).
template <class Block>
constexpr int kLevelOffsetLog2 = std::is_same_v<Block, tensor::BlockQ8_0> || kTableBlock<Block> ? 7
                                 : std::is_same_v<Block, tensor::BlockQ5_0>                      ? 4
                                                                                                  : 3;

// ---- IQ4_XS -------------------------------------------------------------------------------
// The 64 signed scales of an interleaved IQ4_XS super-block (tensor/interleave.cpp; index 8 ×
// sub-block + row) from their low 4 and top 2 bits, into sc.
HWY_INLINE void IQ4_XSScales(const uint8_t* block, int8_t* sc) {
  const DU8 du;
  const hn::Full128<uint8_t> d16;
  const VU8 low = hn::LoadU(du, block + 16);
  const auto top = hn::LoadU(d16, block + 48);  // scale i's top bits: bits 2 (i / 16), +1 of byte i % 16
  const VU8 top_first = hn::Combine(du, hn::ShiftRight<2>(top), top);
  const VU8 top_second = hn::Combine(du, hn::ShiftRight<6>(top), hn::ShiftRight<4>(top));
  const VU8 three = hn::Set(du, 3), thirty_two = hn::Set(du, 32);
  const VU8 first = hn::Or(hn::And(low, hn::Set(du, 0x0f)), hn::ShiftLeft<4>(hn::And(top_first, three)));
  const VU8 second = hn::Or(hn::ShiftRight<4>(low), hn::ShiftLeft<4>(hn::And(top_second, three)));
  hn::StoreU(hn::BitCast(DI8(), hn::Sub(first, thirty_two)), DI8(), sc);  // wraps to the signed scale
  hn::StoreU(hn::BitCast(DI8(), hn::Sub(second, thirty_two)), DI8(), sc + 32);
}

// Sub-block j's scales of each group's 64, one per lane, sign-extended.
template <int G>
HWY_INLINE VG<int32_t, G> SubBlockScales(const int8_t (&sc)[G][64], int j) {
  return PerGroup<G>([&](int g) { return hn::PromoteTo(DI32(), hn::LoadU(hn::Full64<int8_t>(), sc[g] + 8 * j)); });
}

// Each lane's scale s as the int16 pair (s, s).
template <class V>
HWY_INLINE V ScalePairs(V scale) {
  const hn::DFromV<V> d;
  return hn::Or(hn::And(scale, hn::Set(d, 0xffff)), hn::ShiftLeft<16>(scale));
}

// acc + s · (dw · da): a block's one float step, for all the rows of a vector.
template <class VF, class VI>
HWY_INLINE VF AddScaled(VF acc, VI s, VF dw, float da) {
  const hn::DFromV<VF> df;
  return hn::Add(acc, hn::Mul(hn::ConvertTo(df, s), hn::Mul(dw, hn::Set(df, da))));
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
