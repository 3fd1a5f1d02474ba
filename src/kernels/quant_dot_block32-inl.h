// The fused kernels for tiles of rows of blocks of 32 (Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4 against
// Q8_0 activation rows; Q4_1, Q5_1 against Q8_1) as the file stores them (quant_dot-inl.h).
//
// The levels are signed, so the activation side goes unsigned (a + 128) and 128 × the weight
// sum comes off. Each block's integer dot product is exact before its one float multiply-add,
// done per lane (the result then equals the reference up to float order).
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_BLOCK32_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_BLOCK32_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_BLOCK32_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_BLOCK32_INL_H_
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

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // as in quant_dot_common-inl.h
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

#if NANOSERVE_FUSED_QUANT_DOT
namespace qd {

// 16 bytes of Q4_0/Q5_0 nibbles as the block's 32 levels in order (low nibbles first).
HWY_INLINE VU8 LegacyNibbles(const uint8_t* qs) {
  const hn::Full128<uint8_t> d128;
  const DU8 du;
  const auto x = hn::LoadU(d128, qs);
  const auto lo = hn::And(x, hn::Set(d128, 0x0f));
  const auto hi = hn::And(hn::ShiftRight<4>(x), hn::Set(d128, 0x0f));
  return hn::Combine(du, hi, lo);
}

// Q5_0's fifth bits (bit j of qh for element j) as 0 or 16 per byte.
HWY_INLINE VU8 FifthBits(const uint8_t* qh) {
  const DU8 du;
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  // Byte j takes byte j / 8 of the word, then tests its bit j % 8.
  alignas(32) static constexpr uint8_t kByteOf[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                      2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
  alignas(32) static constexpr uint8_t kBit[32] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128,
                                                   1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const auto word = hn::BitCast(du, hn::Set(DI32(), static_cast<int32_t>(bits)));
  const auto spread = hn::TableLookupBytes(word, hn::Load(du, kByteOf));
  const auto set = hn::TestBit(spread, hn::Load(du, kBit));
  return hn::IfThenElseZero(set, hn::Set(du, 16));
}

// The 16 levels of a table type in each 128-bit half, for a byte shuffle (vpshufb looks up
// within each half).
template <class Block>
HWY_INLINE VI8 LevelTable() {
  const int8_t* t = std::is_same_v<Block, tensor::BlockMXFP4> ? tensor::kMXFP4Levels : tensor::kIQ4Levels;
  const hn::Full128<int8_t> d128;
  const auto half = hn::LoadU(d128, t);
  return hn::Combine(DI8(), half, half);
}

// The block's 32 levels as signed bytes: Q8_0's as stored, Q4_0's nibble - 8, Q5_0's
// (nibble | fifth bit << 4) - 16, IQ4_NL's and MXFP4's their table's entry for the nibble.
template <class Block>
HWY_INLINE VI8 SignedLevels(const uint8_t* block) {
  const DI8 di8;
  if constexpr (kTableBlock<Block>) {
    return hn::TableLookupBytes(LevelTable<Block>(), hn::BitCast(di8, LegacyNibbles(block + offsetof(Block, qs))));
  } else if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    return hn::LoadU(di8, reinterpret_cast<const int8_t*>(block + offsetof(Block, qs)));
  } else if constexpr (std::is_same_v<Block, tensor::BlockQ5_0>) {
    const VU8 q = hn::Or(LegacyNibbles(block + offsetof(Block, qs)), FifthBits(block + offsetof(Block, qh)));
    return hn::Sub(hn::BitCast(di8, q), hn::Set(di8, 16));
  } else {
    return hn::Sub(hn::BitCast(di8, LegacyNibbles(block + offsetof(Block, qs))), hn::Set(di8, 8));
  }
}

// The block's scale: an fp16, or MXFP4's halved power of two.
template <class Block>
HWY_INLINE float BlockScale(const uint8_t* block) {
  if constexpr (std::is_same_v<Block, tensor::BlockMXFP4>)
    return tensor::mxfp4_scale(block[offsetof(Block, e)]);
  else
    return Half(block + offsetof(Block, d));
}

// out[i * NR + r]: the sum of acc[i][r]'s lanes.
template <int NW, int NR>
HWY_INLINE void Reduce(VF (&acc)[NW][NR], float* out) {
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = hn::GetLane(hn::SumOfLanes(DF(), acc[i][r]));
}

// A tile (quant_dot-inl.h) per block: dw·da·(Σ (a + 128)·w − 128·Σ w), exact in int32 before the one float step. The
// byte dot product starts from −128·Σ w, so a (weight row, activation row) pair costs a byte
// dot, a conversion, a multiply and a multiply-add per block.
template <class Block, int NW, int NR>
void DotBlock32(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a, float* out) {
  const DU8 du;
  VF acc[NW][NR];
  for (auto& row : acc)
    for (auto& v : row) v = hn::Zero(DF());
  const auto k128 = hn::Set(du, 0x80);
  for (int64_t b = 0; b < n / Block::kElems; ++b) {
    VI8 w[NW];
    VI32 minus_w_sum128[NW];
    VF dw[NW];
    for (int i = 0; i < NW; ++i) {
      const uint8_t* block = w0 + i * row_bytes + b * sizeof(Block);
      PrefetchAhead<sizeof(Block), Ahead::kL2>(block, end);
      w[i] = SignedLevels<Block>(block);
      minus_w_sum128[i] = hn::Neg(DotBytes(hn::Zero(DI32()), k128, w[i]));
      dw[i] = hn::Set(DF(), BlockScale<Block>(block));
    }
    for (int r = 0; r < NR; ++r) {
      const VU8 u = hn::LoadU(du, a[r].u + b * Block::kElems);
      const VF da = hn::Set(DF(), a[r].d[b]);
      for (int i = 0; i < NW; ++i) {
        const VI32 s = DotBytes(minus_w_sum128[i], u, w[i]);
        // (s·dw)·da: both products on vectors (a scalar dw·da would cost a broadcast per pair).
        acc[i][r] = hn::MulAdd(hn::Mul(hn::ConvertTo(DF(), s), dw[i]), da, acc[i][r]);
      }
    }
  }
  Reduce<NW, NR>(acc, out);
}

// The 32 unsigned levels (0..15, 0..31) of a Q4_1 or Q5_1 block in order.
template <class Block>
HWY_INLINE VU8 MinLevels(const uint8_t* block) {
  const VU8 low = LegacyNibbles(block + offsetof(Block, qs));
  if constexpr (std::is_same_v<Block, tensor::BlockQ5_1>)
    return hn::Or(low, FifthBits(block + offsetof(Block, qh)));
  else
    return low;
}

// Q4_1 and Q5_1 (x = d · u + m) against Q8_1 rows, as the reference: per block
// (dw · da) · Σ u · a, and m · s apart (s: the activation block's d · Σ a), summed at the end.
template <class Block, int NW, int NR>
void DotBlock32Min(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a,
                   float* out) {
  const DI8 di8;
  VF acc[NW][NR];
  for (auto& row : acc)
    for (auto& v : row) v = hn::Zero(DF());
  float mins[NW][NR] = {};  // the reference's sum of m · s, in its order
  for (int64_t b = 0; b < n / Block::kElems; ++b) {
    VU8 u[NW];
    VF dw[NW];
    float m[NW];
    for (int i = 0; i < NW; ++i) {
      const uint8_t* block = w0 + i * row_bytes + b * sizeof(Block);
      PrefetchAhead<sizeof(Block), Ahead::kL2>(block, end);
      u[i] = MinLevels<Block>(block);
      dw[i] = hn::Set(DF(), Half(block + offsetof(Block, d)));
      m[i] = Half(block + offsetof(Block, m));
    }
    for (int r = 0; r < NR; ++r) {
      const VI8 q = hn::LoadU(di8, a[r].q + b * Block::kElems);
      const VF da = hn::Set(DF(), a[r].d[b]);
      for (int i = 0; i < NW; ++i) {
        const VI32 s = DotBytes(hn::Zero(DI32()), u[i], q);
        acc[i][r] = hn::MulAdd(hn::Mul(hn::ConvertTo(DF(), s), dw[i]), da, acc[i][r]);
        mins[i][r] += m[i] * a[r].s[b];
      }
    }
  }
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = hn::GetLane(hn::SumOfLanes(DF(), acc[i][r])) + mins[i][r];
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
