// What every fused quantized dot product kernel (quant_dot-inl.h) is built from: the vector
// types, the exact byte dot product, fp16 scales and the unpacking of 4-bit and 6-bit levels.
// Defines NANOSERVE_FUSED_QUANT_DOT: 1 on the x86 targets with 256-bit vectors (AVX2, AVX-512,
// AVX-512 VNNI), which have the kernels; 0 elsewhere.
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_COMMON_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_COMMON_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_COMMON_INL_H_
#endif

#include <cstring>

#include <hwy/highway.h>

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
// target has; the pragma adds it for the quant_dot headers' functions only. Each of those
// headers repeats it, so that their functions, which inline one another, share one target.
#pragma GCC target("avx512vnni")
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

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

// acc + (for each int32 lane k) sum over j < 4 of u[4k + j] * s[4k + j]: acc int32 lanes, u
// unsigned bytes, s signed bytes, in 256-bit vectors (or 512-bit ones on AVX3_DL).
template <class VI, class VU, class VS>
HWY_INLINE VI DotBytes(VI acc, VU u, VS s) {
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
  const hn::DFromV<VI> d32;
  const hn::Repartition<int16_t, decltype(d32)> d16;
  const hn::Repartition<uint16_t, decltype(d32)> du16;
  const auto u16 = hn::BitCast(d16, u), s16 = hn::BitCast(d16, s);
  const auto u_even = hn::And(u16, hn::Set(d16, 0xff)), u_odd = hn::BitCast(d16, hn::ShiftRight<8>(hn::BitCast(du16, u16)));
  const auto s_even = hn::ShiftRight<8>(hn::ShiftLeft<8>(s16)), s_odd = hn::ShiftRight<8>(s16);
  auto odd = hn::Zero(d32);
  acc = hn::ReorderWidenMulAccumulate(d32, u_even, s_even, acc, odd);
  acc = hn::ReorderWidenMulAccumulate(d32, u_odd, s_odd, acc, odd);
  return hn::Add(acc, odd);
#endif
}

#if HWY_TARGET != HWY_AVX3_DL
// The byte dot products of the targets without VNNI, in two steps (quant_dot_pairs-inl.h).
// Highway 1.0.3 has neither vpmaddubsw nor vpsignb (vpmaddwd is written out as PairDots does);
// the portable path is DotBytes above, and the kernels
// built on these equal the scalar reference on every target (tests/kernels/matmul_test.cpp).
using VI16 = hn::Vec<DI16>;

// Per int16 lane i, u[2i]·s[2i] + u[2i+1]·s[2i+1] (vpmaddubsw: u unsigned, s signed bytes). The
// instruction saturates: the callers keep |each pair| ≤ 2 · 128 · 127 < 2^15, so it is exact.
HWY_INLINE VI16 PairSums(VU8 u, VI8 s) { return VI16{_mm256_maddubs_epi16(u.raw, s.raw)}; }

// Per int32 lane, x[2i]·y[2i] + x[2i+1]·y[2i+1] of the int16 lanes (vpmaddwd: exact).
HWY_INLINE VI32 MulAddPairs(VI16 x, VI16 y) { return VI32{_mm256_madd_epi16(x.raw, y.raw)}; }

// The int16 lanes summed in pairs into int32 lanes.
HWY_INLINE VI32 WidenPairs(VI16 pairs) { return MulAddPairs(pairs, hn::Set(DI16(), 1)); }

// s with the sign of w, per byte (vpsignb: −s where w < 0, 0 where w is 0). Exact for s > −128.
HWY_INLINE VI8 WithSignOf(VI8 s, VI8 w) { return VI8{_mm256_sign_epi8(s.raw, w.raw)}; }
#endif

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

}  // namespace qd
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
