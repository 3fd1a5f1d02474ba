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

// ---- Blocks of 32 (Q8_0, Q4_0, Q5_0) ------------------------------------------------------
// The unsigned levels u of chunks 2m and 2m + 1 of the blocks at `block`.
template <class Block, int G>
HWY_INLINE void Block32Chunks(const uint8_t* block, int m, VG<uint8_t, G>& even, VG<uint8_t, G>& odd) {
  using L = Lanes<Block, G>;
  const uint8_t* levels = block + 2 * tensor::kInterleaveRows;
  if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    even = L::Load(levels + 64 * m);
    odd = L::Load(levels + 64 * m + 32);
  } else {
    const auto nibbles = L::Load(levels + 32 * m);
    even = Nibbles<0>(nibbles);
    odd = Nibbles<4>(nibbles);
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
constexpr int kLevelOffsetLog2 =
    std::is_same_v<Block, tensor::BlockQ8_0> ? 7 : std::is_same_v<Block, tensor::BlockQ5_0> ? 4 : 3;

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
