// Scalar conversions between float and the two 16-bit float formats GGUF stores.
// Header-only so that kernels can inline them.
//
// F16 (IEEE binary16): round-to-nearest-even both ways, subnormals kept, overflow to
// inf; NaNs keep their top payload bits and come back quiet. This is exactly what the
// x86 F16C instructions (vcvtps2ph with imm 0, vcvtph2ps) do.
// BF16 (the top half of a float): round-to-nearest-even, subnormals kept, NaN stays
// NaN (forced quiet), as ggml's converter does.
#pragma once

#include <bit>
#include <cstdint>

namespace nanoserve::tensor {

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)  // inf, or NaN made quiet (bit 22 set) with its payload kept
    return std::bit_cast<float>(sign | 0x7f800000u | (mant ? 0x400000u | (mant << 13) : 0u));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -mag : mag;
  }
  // Normal: rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t f32_to_f16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t mag = bits & 0x7fffffffu;

  if (mag >= 0x7f800000u) {  // inf or NaN
    if (mag == 0x7f800000u) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | ((mag >> 13) & 0x3ffu));
  }
  // 65520 is the midpoint between the largest half (65504) and 2^16; ties go to the
  // even neighbour, which is infinity.
  if (mag >= 0x477ff000u) return sign | 0x7c00u;

  if (mag < 0x38800000u) {  // below 2^-14: the result is a half subnormal (or zero)
    const uint32_t exp = mag >> 23;
    if (exp < 102) return sign;  // below 2^-25: rounds to zero even at the tie
    // Value in units of 2^-24 is m * 2^(exp - 126); shift right with RNE.
    const uint32_t m = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | q);
  }

  // Normal half: rebias, drop 13 mantissa bits with RNE. A carry out of the mantissa
  // correctly bumps the exponent.
  uint32_t h = (mag - (112u << 23)) >> 13;
  const uint32_t rem = mag & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)  // NaN: truncate, and set the quiet bit so
    return static_cast<uint16_t>((bits >> 16) | 0x40u);  // a payload in the low half can't turn it into inf
  // Adding 0x7fff (+1 when the kept LSB is odd) rounds to nearest, ties to even;
  // a carry propagates into the exponent and overflows to inf as it should.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace nanoserve::tensor
