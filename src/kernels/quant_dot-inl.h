// Fused dot products of quantized weight rows with Q8 activation rows, read straight from the
// weight blocks (no level buffer), for the x86 targets with 256-bit vectors (AVX2, AVX-512,
// AVX-512 VNNI). A tile of weight rows × activation rows is computed together, so each weight
// block is unpacked once per tile and each activation block loaded once per tile.
//
// Integer part: unsigned × signed byte products summed four at a time into int32 lanes (VNNI's
// vpdpbusd; elsewhere the same lanes from 16-bit multiplies). K-quant levels are unsigned
// fields and multiply the signed activation levels directly (Q6_K's offset of 32 comes off
// through the activation's 16-element sums); the blocks of 32 (Q8_0, Q4_0, Q5_0) have signed
// levels, so the activation side goes unsigned (a + 128) and 128 × the weight sum comes off.
// Either way each block's integer dot product is exact before its one float multiply-add,
// done per lane for blocks of 32 (the result then equals the reference up to float order)
// and per super-block for the K-quants (equal bit for bit, see LaneSum).
// Float part: one multiply-add per block (or super-block) with the product of the scales,
// lanes summed at the end. Results equal the reference up to float summation order.
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#endif

#include <cstring>

#include <hwy/highway.h>

#include "kernels/prefetch-inl.h"
#include "kernels/weight_rows.h"
#include "tensor/blocks.h"
#include "tensor/interleave.h"

#undef NANOSERVE_FUSED_QUANT_DOT
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define NANOSERVE_FUSED_QUANT_DOT 1
#include <immintrin.h>
#else
#define NANOSERVE_FUSED_QUANT_DOT 0
#endif

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
// Highway 1.0.3's AVX3_DL target does not enable AVX-512 VNNI, which every CPU of that
// target has; the pragma adds it for this header's functions only.
#pragma GCC target("avx512vnni")
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

constexpr int kMaxTileRows = 4;
// Activation rows per interleaved tile: 8 where AVX-512's 32 registers hold 8 accumulators
// beside the group's 8 chunks (one pass over the weights serves a decode step of 8
// sequences), 4 on AVX2's 16 registers.
constexpr int kInterleavedTileRows = HWY_TARGET == HWY_AVX2 ? 4 : 8;

#if NANOSERVE_FUSED_QUANT_DOT
namespace qd {
namespace hn = hwy::HWY_NAMESPACE;

using DU8 = hn::Full256<uint8_t>;
using DI8 = hn::Full256<int8_t>;
using DI16 = hn::Full256<int16_t>;
using DI32 = hn::Full256<int32_t>;
using DF = hn::Full256<float>;
using VU8 = hn::Vec<DU8>;
using VI8 = hn::Vec<DI8>;
using VI32 = hn::Vec<DI32>;
using VF = hn::Vec<DF>;

// acc + (for each int32 lane k) sum over j < 4 of u[4k + j] * s[4k + j].
HWY_INLINE VI32 DotBytes(VI32 acc, VU8 u, VI8 s) {
#if HWY_TARGET == HWY_AVX3_DL
  // Highway 1.0.3 has no byte dot. Its AVX3_DL target also enables AVX-VNNI, so GCC would
  // emit the VEX form of vpdpbusd, which AVX-512 CPUs without AVX-VNNI (Ice Lake, Zen 4)
  // do not have, and which reaches only 16 of the 32 vector registers: the EVEX form is
  // written out here.
  asm("%{evex%} vpdpbusd %2, %1, %0" : "+v"(acc.raw) : "v"(u.raw), "v"(s.raw));
  return acc;
#else
  // Even and odd bytes widened in place to 16 bits; each 16-bit product pair sums into the
  // int32 lane holding bytes 4k..4k+3, so the lanes are vpdpbusd's.
  const DI16 d16;
  const auto u16 = hn::BitCast(d16, u), s16 = hn::BitCast(d16, s);
  const auto u_even = hn::And(u16, hn::Set(d16, 0xff)), u_odd = hn::BitCast(d16, hn::ShiftRight<8>(hn::BitCast(hn::Full256<uint16_t>(), u16)));
  const auto s_even = hn::ShiftRight<8>(hn::ShiftLeft<8>(s16)), s_odd = hn::ShiftRight<8>(s16);
  auto odd = hn::Zero(DI32());
  acc = hn::ReorderWidenMulAccumulate(DI32(), u_even, s_even, acc, odd);
  acc = hn::ReorderWidenMulAccumulate(DI32(), u_odd, s_odd, acc, odd);
  return hn::Add(acc, odd);
#endif
}

// The fp16 at p (F16C's conversion, exact).
HWY_INLINE float Half(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  const hn::Full128<float> d4;
  const hn::Rebind<hwy::float16_t, decltype(d4)> dh;
  const hn::Rebind<uint16_t, decltype(d4)> du16;
  return hn::GetLane(hn::PromoteTo(d4, hn::BitCast(dh, hn::Set(du16, bits))));
}

// Bytes as unsigned nibbles: low nibbles (shift 0) or high nibbles (shift 4).
template <int kShift, class V>
HWY_INLINE V Nibbles(V bytes) {
  const hn::DFromV<V> du;
  const hn::Repartition<uint16_t, decltype(du)> d16;
  if constexpr (kShift == 0) return hn::And(bytes, hn::Set(du, 0x0f));
  // A 16-bit shift and one mask (a byte shift would mask once more).
  else return hn::And(hn::BitCast(du, hn::ShiftRight<4>(hn::BitCast(d16, bytes))), hn::Set(du, 0x0f));
}

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

// ---- Q8_0, Q4_0, Q5_0 weights × Q8_0 activations ---------------------------------------
// The block's 32 levels as signed bytes: Q8_0's as stored, Q4_0's nibble - 8, Q5_0's
// (nibble | fifth bit << 4) - 16.
template <class Block>
HWY_INLINE VI8 SignedLevels(const uint8_t* block) {
  const DI8 di8;
  if constexpr (std::is_same_v<Block, tensor::BlockQ8_0>) {
    return hn::LoadU(di8, reinterpret_cast<const int8_t*>(block + offsetof(Block, qs)));
  } else if constexpr (std::is_same_v<Block, tensor::BlockQ5_0>) {
    const VU8 q = hn::Or(LegacyNibbles(block + offsetof(Block, qs)), FifthBits(block + offsetof(Block, qh)));
    return hn::Sub(hn::BitCast(di8, q), hn::Set(di8, 16));
  } else {
    return hn::Sub(hn::BitCast(di8, LegacyNibbles(block + offsetof(Block, qs))), hn::Set(di8, 8));
  }
}

// Q6_K's levels from their two parts: low | (bits 2g and 2g + 1 of each byte of top) << 4.
// One 16-bit shift moves the two bits to bits 4-5 of their byte, and the mask drops what the
// shift brought over from the neighbouring byte.
template <class V>
HWY_INLINE V WithTopBits(V low, V top, int g) {
  const hn::DFromV<V> du;
  const hn::Repartition<uint16_t, decltype(du)> d16;
  V placed;
  switch (g) {
    case 0: placed = hn::BitCast(du, hn::ShiftLeft<4>(hn::BitCast(d16, top))); break;
    case 1: placed = hn::BitCast(du, hn::ShiftLeft<2>(hn::BitCast(d16, top))); break;
    case 2: placed = top; break;
    default: placed = hn::BitCast(du, hn::ShiftRight<2>(hn::BitCast(d16, top)));
  }
  return hn::OrAnd(low, placed, hn::Set(du, 0x30));
}

// A tile is NW consecutive weight rows (row i at w0 + i * row_bytes) × NR activation rows;
// out[i * NR + r] is the dot product of weight row i with activation row r. Each weight
// block is unpacked once per tile and each activation block loaded once per tile, so the
// loads per multiply shrink with the tile; accumulators stay in registers.
template <int NW, int NR>
HWY_INLINE void Reduce(VF (&acc)[NW][NR], float* out) {
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) out[i * NR + r] = hn::GetLane(hn::SumOfLanes(DF(), acc[i][r]));
}

// Q8_0, Q4_0, Q5_0 per block: dw·da·(Σ (a + 128)·w − 128·Σ w), exact in int32 before the one
// float step. The byte dot product starts from −128·Σ w, so a (weight row, activation row)
// pair costs a byte dot, a conversion, a multiply and a multiply-add per block.
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
      dw[i] = hn::Set(DF(), Half(block + offsetof(Block, d)));
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

// The K-quant kernels sum each super-block's integer dot product exactly (lanes, then across
// lanes) and add it in scalar float in the reference's order, so they equal it bit for bit:
// the float work is per 256 elements, and llama.cpp-sized logit differences of tiny models
// do not come back through a different summation order.
int32_t LaneSum(VI32 v) { return hn::GetLane(hn::SumOfLanes(DI32(), v)); }

// Q4_K per super-block: d·da·Σ_j sc_j·(levels_j · a_j) − dmin·da·Σ_j m_j·(bsum_2j + bsum_2j+1).
template <int NW, int NR>
void DotQ4_K(const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a, float* out) {
  using Block = tensor::BlockQ4_K;
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

#if HWY_TARGET == HWY_AVX3_DL
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
#endif

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

#if HWY_TARGET == HWY_AVX3_DL
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
#endif

// The interleaved kernel for Block's rows: Q4_K's, Q6_K's, or the one for blocks of 32.
template <class Block, int NR, int H>
HWY_INLINE void InterleavedKernel(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n,
                                  const Q8Row* a, const int32_t* minus_128_sums, float* out) {
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K>) DotQ4_Kx8<NR, H>(group, stride, end, n, a, out);
  else if constexpr (std::is_same_v<Block, tensor::BlockQ6_K>) DotQ6_Kx8<NR, H>(group, stride, end, n, a, out);
  else DotBlock32x8<Block, NR, H>(group, stride, end, n, a, minus_128_sums, out);
}

}  // namespace qd

// One interleaved group, its block b at group + b * stride.
template <class Block>
void GroupDotOf(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                const int32_t* minus_128_sums, int nr, float* out) {
  switch (nr) {
    case 1: return qd::InterleavedKernel<Block, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 2: return qd::InterleavedKernel<Block, 2, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 3: return qd::InterleavedKernel<Block, 3, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 4: return qd::InterleavedKernel<Block, 4, 1>(group, stride, end, n, a, minus_128_sums, out);
#if HWY_TARGET != HWY_AVX2
    case 5: return qd::InterleavedKernel<Block, 5, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 6: return qd::InterleavedKernel<Block, 6, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 7: return qd::InterleavedKernel<Block, 7, 1>(group, stride, end, n, a, minus_128_sums, out);
#endif
    default:
      return qd::InterleavedKernel<Block, kInterleavedTileRows, 1>(group, stride, end, n, a, minus_128_sums, out);
  }
}

// A pair of groups with the 8-lane kernels: both groups in one pass, one stream whose lines
// are used as they arrive (one group after the other, the stride between its blocks breaks
// the hardware prefetchers: 0.5B Q8_0 decode 36.6-50.5 against 58.4-89.9 tok/s). Up to 4
// activation rows a pass (AVX2's tile; its registers then spill a few accumulators, which
// costs less than unpacking the levels again for shorter passes: Q5_0 prefill 24% slower in
// passes of 3); later passes find the pair in cache.
template <class Block>
void PairDotBy8(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, const int32_t* minus_128_sums,
                int nr, float* out) {
  constexpr int kPassRows = 4;
  const uint64_t stride = 2 * tensor::kInterleaveRows * sizeof(Block);
  for (int r0 = 0; r0 < nr; r0 += kPassRows) {
    const int32_t* sums = minus_128_sums ? minus_128_sums + r0 * (n / 32) : nullptr;
    float* o = out + tensor::kPairRows * r0;
    switch (std::min(kPassRows, nr - r0)) {
      case 1: qd::InterleavedKernel<Block, 1, 2>(pair, stride, end, n, a + r0, sums, o); break;
      case 2: qd::InterleavedKernel<Block, 2, 2>(pair, stride, end, n, a + r0, sums, o); break;
      case 3: qd::InterleavedKernel<Block, 3, 2>(pair, stride, end, n, a + r0, sums, o); break;
      default: qd::InterleavedKernel<Block, kPassRows, 2>(pair, stride, end, n, a + r0, sums, o); break;
    }
  }
}

#if HWY_TARGET == HWY_AVX3_DL
// The K-quant kernels for two groups keep four accumulators per activation row: at most 4
// rows fit the registers, so a larger tile is done 4 rows at a time.
constexpr int kWideKQuantRows = 4;

template <class Block, int NR>
HWY_INLINE void KQuantPairKernel(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, float* out) {
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K>) qd::DotQ4_Kx16<NR>(pair, end, n, a, out);
  else qd::DotQ6_Kx16<NR>(pair, end, n, a, out);
}

template <class Block>
void KQuantPairDotOf(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, int nr, float* out) {
  for (int r0 = 0; r0 < nr; r0 += kWideKQuantRows) {
    float* o = out + 16 * r0;
    switch (std::min(kWideKQuantRows, nr - r0)) {
      case 1: KQuantPairKernel<Block, 1>(pair, end, n, a + r0, o); break;
      case 2: KQuantPairKernel<Block, 2>(pair, end, n, a + r0, o); break;
      case 3: KQuantPairKernel<Block, 3>(pair, end, n, a + r0, o); break;
      default: KQuantPairKernel<Block, kWideKQuantRows>(pair, end, n, a + r0, o); break;
    }
  }
}

template <class Block>
void Block32PairDotOf(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a,
                      const int32_t* minus_128_sums, int nr, float* out) {
  switch (nr) {
    case 4: return qd::DotBlock32x16<Block, 4>(pair, end, n, a, minus_128_sums, out);
    case 5: return qd::DotBlock32x16<Block, 5>(pair, end, n, a, minus_128_sums, out);
    case 6: return qd::DotBlock32x16<Block, 6>(pair, end, n, a, minus_128_sums, out);
    case 7: return qd::DotBlock32x16<Block, 7>(pair, end, n, a, minus_128_sums, out);
    default: return qd::DotBlock32x16<Block, kInterleavedTileRows>(pair, end, n, a, minus_128_sums, out);
  }
}
#endif

// A pair of groups (tensor/interleave.h): out[r * 16 + j] for its rows j = 0..15. Where
// 512-bit byte dot products exist, both groups in each vector from 4 activation rows on; for
// fewer (decode) the 8-lane kernels, which read the stream faster (matmul_range.h).
template <class Block>
void PairDotOf(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, const int32_t* minus_128_sums,
               int nr, float* out) {
#if HWY_TARGET == HWY_AVX3_DL
  if (nr <= 3) return PairDotBy8<Block>(pair, end, n, a, minus_128_sums, nr, out);
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K> || std::is_same_v<Block, tensor::BlockQ6_K>)
    return KQuantPairDotOf<Block>(pair, end, n, a, nr, out);
  else
    return Block32PairDotOf<Block>(pair, end, n, a, minus_128_sums, nr, out);
#else
  PairDotBy8<Block>(pair, end, n, a, minus_128_sums, nr, out);
#endif
}

// out[r * 8 * (pair ? 2 : 1) + j] = dot(row j of the interleaved rows at `group`, activation
// row a[r]) for r < nr (1..kInterleavedTileRows): a pair of groups (16 rows), or one group,
// its block b at group + b * stride. type: Q8_0, Q5_0, Q4_0, Q4_K or Q6_K (the K-quants do not
// use minus_128_sums). end: where prefetches stop (PrefetchLimit).
template <class Block>
void InterleavedDotOf(bool pair, const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n,
                      const Q8Row* a, const int32_t* minus_128_sums, int nr, float* out) {
  if (pair) return PairDotOf<Block>(group, end, n, a, minus_128_sums, nr, out);
  GroupDotOf<Block>(group, stride, end, n, a, minus_128_sums, nr, out);
}

inline void InterleavedDot(TensorType type, bool pair, const uint8_t* group, uint64_t stride, const uint8_t* end,
                           int64_t n, const Q8Row* a, const int32_t* minus_128_sums, int nr, float* out) {
  switch (type) {
    case TensorType::Q8_0:
      return InterleavedDotOf<tensor::BlockQ8_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q5_0:
      return InterleavedDotOf<tensor::BlockQ5_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q4_K:
      return InterleavedDotOf<tensor::BlockQ4_K>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q6_K:
      return InterleavedDotOf<tensor::BlockQ6_K>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    default: return InterleavedDotOf<tensor::BlockQ4_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
  }
}

// Whether this target has a fused kernel for the weight type.
inline bool HasFusedDot(TensorType type) {
  return type == TensorType::Q8_0 || type == TensorType::Q4_0 || type == TensorType::Q5_0 ||
         type == TensorType::Q4_K || type == TensorType::Q6_K;
}

// Weight rows per tile: four for blocks of 32 where AVX-512's 32 registers hold a 4 × 4 tile,
// two for the K-quants (whose tiles also keep integer sums) and on AVX2's 16 registers.
inline int FusedTileRows(TensorType type) {
  const bool k_quant = type == TensorType::Q4_K || type == TensorType::Q6_K;
  return k_quant || HWY_TARGET == HWY_AVX2 ? 2 : 4;
}

template <int NW, int NR>
void FusedTile(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a,
               float* out) {
  switch (type) {
    case TensorType::Q8_0: return qd::DotBlock32<tensor::BlockQ8_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q4_0: return qd::DotBlock32<tensor::BlockQ4_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q5_0: return qd::DotBlock32<tensor::BlockQ5_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q4_K: return qd::DotQ4_K<NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q6_K: return qd::DotQ6_K<NW, NR>(w0, end, row_bytes, n, a, out);
    default: return;
  }
}

template <int NW>
void FusedTileRowsOf(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n,
                     const Q8Row* a, int nr, float* out) {
  switch (nr) {
    case 1: return FusedTile<NW, 1>(type, w0, end, row_bytes, n, a, out);
    case 2: return FusedTile<NW, 2>(type, w0, end, row_bytes, n, a, out);
    case 3: return FusedTile<NW, 3>(type, w0, end, row_bytes, n, a, out);
    default: return FusedTile<NW, kMaxTileRows>(type, w0, end, row_bytes, n, a, out);
  }
}

// out[i * nr + r] = dot(weight row i, activation row a[r]) for i < nw (1, 2 or 4) and
// r < nr (1..kMaxTileRows). end: where prefetches stop (PrefetchLimit).
inline void FusedDot(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, int nw,
                     const Q8Row* a, int nr, float* out) {
  switch (nw) {
    case 1: return FusedTileRowsOf<1>(type, w0, end, row_bytes, n, a, nr, out);
    case 2: return FusedTileRowsOf<2>(type, w0, end, row_bytes, n, a, nr, out);
    default: return FusedTileRowsOf<4>(type, w0, end, row_bytes, n, a, nr, out);
  }
}
#else
inline bool HasFusedDot(TensorType) { return false; }
inline void InterleavedDot(TensorType, bool, const uint8_t*, uint64_t, const uint8_t*, int64_t, const Q8Row*,
                           const int32_t*, int, float*) {}
inline int FusedTileRows(TensorType) { return 1; }
inline void FusedDot(TensorType, const uint8_t*, const uint8_t*, uint64_t, int64_t, int, const Q8Row*, int, float*) {}
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
