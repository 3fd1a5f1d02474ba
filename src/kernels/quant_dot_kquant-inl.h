// The fused kernels for tiles of Q4_K, Q5_K, Q6_K and IQ4_XS rows as the file stores them, against
// Q8_K activation rows (quant_dot-inl.h).
//
// The levels are unsigned fields and multiply the signed activation levels directly (Q6_K's
// offset of 32 comes off through the activation's 16-element sums). Each super-block's
// integer dot product is exact, and it is added in scalar float in the reference's order, so
// the results equal the reference bit for bit: the float work is per 256 elements, and
// llama.cpp-sized logit differences of tiny models do not come back through a different
// summation order.
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_KQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_KQUANT_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_KQUANT_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_KQUANT_INL_H_
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

// The exact sum of v's lanes.
int32_t LaneSum(VI32 v) { return hn::GetLane(hn::SumOfLanes(DI32(), v)); }

// Q4_K and Q5_K per super-block: d·da·Σ_j sc_j·(levels_j · a_j) − dmin·da·Σ_j m_j·(bsum_2j +
// bsum_2j+1). Q5_K's fifth bits: bit j of qh[l] for element l of sub-block j.
template <class Block, int NW, int NR>
void DotQ45_K(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a, float* out) {
  constexpr bool kQ5 = std::is_same_v<Block, tensor::BlockQ5_K>;
  constexpr int kQK = Block::kElems;
  const DU8 du;
  const DI8 di8;
  const DI16 d16;
  float sum[NW][NR] = {}, sum_mins[NW][NR] = {};
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block[NW];
    int sc[NW][8];
    hn::Vec<DI16> mins[NW];  // m_j for both 16-element halves of sub-block j
    float d[NW], dmin[NW];
    for (int i = 0; i < NW; ++i) {
      block[i] = w0 + i * row_bytes + b * sizeof(Block);
      d[i] = Half(block[i] + offsetof(Block, d));
      dmin[i] = Half(block[i] + offsetof(Block, dmin));
      PrefetchAhead<sizeof(Block), Ahead::kL1AndL2>(block[i], end);
      alignas(32) int16_t m16[16];
      for (int j = 0; j < 8; ++j) {
        int m;
        scale_min_k4(block[i] + offsetof(Block, scales), j, sc[i][j], m);
        m16[2 * j] = m16[2 * j + 1] = static_cast<int16_t>(m);
      }
      mins[i] = hn::Load(d16, m16);
    }
    VI32 isum[NW][NR];
    for (auto& row : isum)
      for (auto& v : row) v = hn::Zero(DI32());
    for (int c = 0; c < 4; ++c) {  // chunk c: sub-blocks 2c (low nibbles) and 2c + 1 (high)
      VU8 lo[NW], hi[NW];
      for (int i = 0; i < NW; ++i) {
        const auto bytes = hn::LoadU(du, block[i] + offsetof(Block, qs) + 32 * c);
        lo[i] = Nibbles<0>(bytes);
        hi[i] = Nibbles<4>(bytes);
        if constexpr (kQ5) {
          const auto qh = hn::LoadU(du, block[i] + offsetof(Block, qh));
          const auto sixteen = hn::Set(du, 16);
          lo[i] = hn::Or(lo[i], hn::IfThenElseZero(hn::TestBit(qh, hn::Set(du, uint8_t{1} << (2 * c))), sixteen));
          hi[i] = hn::Or(hi[i], hn::IfThenElseZero(hn::TestBit(qh, hn::Set(du, uint8_t{2} << (2 * c))), sixteen));
        }
      }
      for (int r = 0; r < NR; ++r) {
        const int8_t* q = a[r].q + b * kQK + 64 * c;
        const VI8 q_lo = hn::LoadU(di8, q), q_hi = hn::LoadU(di8, q + 32);
        for (int i = 0; i < NW; ++i) {
          const VI32 s_lo = DotBytes(hn::Zero(DI32()), lo[i], q_lo);
          const VI32 s_hi = DotBytes(hn::Zero(DI32()), hi[i], q_hi);
          isum[i][r] = hn::Add(isum[i][r], hn::Add(hn::Mul(s_lo, hn::Set(DI32(), sc[i][2 * c])),
                                                   hn::Mul(s_hi, hn::Set(DI32(), sc[i][2 * c + 1]))));
        }
      }
    }
    for (int r = 0; r < NR; ++r) {
      const float da = a[r].d[b];
      const auto bsums = hn::LoadU(d16, a[r].bsums + b * (kQK / 16));
      for (int i = 0; i < NW; ++i) {
        auto odd = hn::Zero(DI32());
        const VI32 msum = hn::Add(hn::ReorderWidenMulAccumulate(DI32(), bsums, mins[i], hn::Zero(DI32()), odd), odd);
        sum[i][r] += (da * d[i]) * static_cast<float>(LaneSum(isum[i][r]));
        sum_mins[i][r] += (da * dmin[i]) * static_cast<float>(LaneSum(msum));
      }
    }
  }
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = sum[i][r] - sum_mins[i][r];
}

// Q6_K (levels q − 32, scales per 16). Chunk c of 128 elements, group g of 32: low 4 bits in
// ql[64c + 32(g % 2) + l] (nibble g / 2), high 2 bits in qh[32c + l] (bits 2g, 2g + 1).
template <int NW, int NR>
void DotQ6_K(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a, float* out) {
  using Block = tensor::BlockQ6_K;
  constexpr int kQK = Block::kElems;
  const DU8 du;
  const DI8 di8;
  const DI16 d16;
  const hn::Full128<int8_t> d8_128;
  float sum[NW][NR] = {};
  const auto first_half = hn::FirstN(DI32(), 4);  // lanes 0-3: the first 16 elements of a group
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block[NW];
    const int8_t* scales[NW];
    VI32 isum[NW][NR];
    for (int i = 0; i < NW; ++i) {
      block[i] = w0 + i * row_bytes + b * sizeof(Block);
      PrefetchAhead<sizeof(Block), Ahead::kL1AndL2>(block[i], end);
      scales[i] = reinterpret_cast<const int8_t*>(block[i] + offsetof(Block, scales));
      const auto scales16 = hn::PromoteTo(d16, hn::LoadU(d8_128, scales[i]));
      for (int r = 0; r < NR; ++r) {  // −32 · Σ_g sc_g · bsum_g, folded into the integer sum
        const auto bsums = hn::LoadU(d16, a[r].bsums + b * (kQK / 16));
        auto odd = hn::Zero(DI32());
        const VI32 off = hn::Add(hn::ReorderWidenMulAccumulate(DI32(), bsums, scales16, hn::Zero(DI32()), odd), odd);
        isum[i][r] = hn::Mul(off, hn::Set(DI32(), -32));
      }
    }
    for (int c = 0; c < 2; ++c) {
      for (int g = 0; g < 4; ++g) {
        VU8 w[NW];
        VI32 sc[NW];
        for (int i = 0; i < NW; ++i) {
          const uint8_t* ql = block[i] + offsetof(Block, ql) + 64 * c + 32 * (g % 2);
          const auto low = g < 2 ? Nibbles<0>(hn::LoadU(du, ql)) : Nibbles<4>(hn::LoadU(du, ql));
          const auto qh = hn::LoadU(du, block[i] + offsetof(Block, qh) + 32 * c);
          w[i] = WithTopBits(low, qh, g);
          const int k = 8 * c + 2 * g;  // the scales of this group's two halves of 16
          sc[i] = hn::IfThenElse(first_half, hn::Set(DI32(), scales[i][k]), hn::Set(DI32(), scales[i][k + 1]));
        }
        for (int r = 0; r < NR; ++r) {
          const VI8 q = hn::LoadU(di8, a[r].q + b * kQK + 128 * c + 32 * g);
          for (int i = 0; i < NW; ++i) isum[i][r] = hn::Add(isum[i][r], hn::Mul(DotBytes(hn::Zero(DI32()), w[i], q), sc[i]));
        }
      }
    }
    for (int i = 0; i < NW; ++i) {
      const float d = Half(block[i] + offsetof(Block, d));
      for (int r = 0; r < NR; ++r) sum[i][r] += (a[r].d[b] * d) * static_cast<float>(LaneSum(isum[i][r]));
    }
  }
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = sum[i][r];
}

// IQ4_XS (a K-quant without mins, table levels): each sub-block's levels go in as their table's
// entries + 128 (unsigned), and 128 · Σ_j sc_j · (a's sum over sub-block j) comes off the exact
// integer sum before the reference's float step.
template <int NW, int NR>
void DotIQ4_XS(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a, float* out) {
  using Block = tensor::BlockIQ4_XS;
  constexpr int kQK = Block::kElems;
  const DI8 di8;
  const DI16 d16;
  const hn::Full128<uint8_t> d128;
  float sum[NW][NR] = {};
  for (int64_t b = 0; b < n / kQK; ++b) {
    const uint8_t* block[NW];
    int sc[NW][8];
    hn::Vec<DI16> scales16[NW];  // sc_j for both 16-element halves of sub-block j
    for (int i = 0; i < NW; ++i) {
      block[i] = w0 + i * row_bytes + b * sizeof(Block);
      PrefetchAhead<sizeof(Block), Ahead::kL1AndL2>(block[i], end);
      uint16_t high;
      std::memcpy(&high, block[i] + offsetof(Block, scales_h), sizeof high);
      const uint8_t* low = block[i] + offsetof(Block, scales_l);
      alignas(32) int16_t s16[16];
      for (int j = 0; j < 8; ++j) {
        sc[i][j] = (((low[j / 2] >> (4 * (j % 2))) & 0x0f) | ((high >> (2 * j)) & 3) << 4) - 32;
        s16[2 * j] = s16[2 * j + 1] = static_cast<int16_t>(sc[i][j]);
      }
      scales16[i] = hn::Load(d16, s16);
    }
    VI32 isum[NW][NR];
    for (auto& row : isum)
      for (auto& v : row) v = hn::Zero(DI32());
    for (int j = 0; j < 8; ++j) {
      VU8 u[NW];
      for (int i = 0; i < NW; ++i) {  // element l: low nibble of qs[16 j + l], l + 16: its high nibble
        const auto bytes = hn::LoadU(d128, block[i] + offsetof(Block, qs) + 16 * j);
        const auto indices = hn::Combine(DU8(), Nibbles<4>(bytes), Nibbles<0>(bytes));
        u[i] = UnsignedLevels<Block>(indices);
      }
      for (int r = 0; r < NR; ++r) {
        const VI8 q = hn::LoadU(di8, a[r].q + b * kQK + 32 * j);
        for (int i = 0; i < NW; ++i)
          isum[i][r] = hn::Add(isum[i][r], hn::Mul(DotBytes(hn::Zero(DI32()), u[i], q), hn::Set(DI32(), sc[i][j])));
      }
    }
    for (int r = 0; r < NR; ++r) {
      const auto bsums = hn::LoadU(d16, a[r].bsums + b * (kQK / 16));
      for (int i = 0; i < NW; ++i) {
        auto odd = hn::Zero(DI32());
        const VI32 offset = hn::Add(hn::ReorderWidenMulAccumulate(DI32(), bsums, scales16[i], hn::Zero(DI32()), odd), odd);
        const int32_t exact = LaneSum(isum[i][r]) - 128 * LaneSum(offset);
        sum[i][r] += (a[r].d[b] * Half(block[i] + offsetof(Block, d))) * static_cast<float>(exact);
      }
    }
  }
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = sum[i][r];
}

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
