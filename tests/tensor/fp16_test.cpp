// F16 and BF16 scalar conversions. The float -> half direction is checked against the
// definition of round-to-nearest-even (no other converter is used as an oracle): the result
// must be at least as close to x as both of its neighbours, and even on a tie.
#include "tensor/fp16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace nanoserve::tensor {
namespace {

// A 16-bit float format with `mant_bits` mantissa bits and the given exponent bias.
struct Format {
  int mant_bits;
  int bias;
  uint16_t (*encode)(float);
  float (*decode)(uint16_t);
  uint16_t inf_bits() const { return static_cast<uint16_t>(0x7fffu >> mant_bits << mant_bits); }
};

const Format kF16{10, 15, &f32_to_f16, &f16_to_f32};
const Format kBF16{7, 127, &f32_to_bf16, &bf16_to_f32};

// Value of a non-negative magnitude pattern, computed from the format's definition. The
// pattern one above the largest finite value (infinity) counts as the next power of two,
// which is what the rounding rule compares against.
double magnitude_value(const Format& f, uint32_t m) {
  const uint32_t exp = m >> f.mant_bits;
  const uint32_t mant = m & ((1u << f.mant_bits) - 1);
  if (exp == 0) return std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mant_bits);
  return std::ldexp(static_cast<double>((1u << f.mant_bits) | mant), static_cast<int>(exp) - f.bias - f.mant_bits);
}

// Checks that encode(x) is the round-to-nearest-even of the finite float x.
::testing::AssertionResult rounds_to_nearest_even(const Format& f, float x) {
  const uint16_t h = f.encode(x);
  const bool negative = std::signbit(x);
  if (((h & 0x8000u) != 0) != negative)
    return ::testing::AssertionFailure() << "sign lost for " << x << " -> 0x" << std::hex << h;
  const uint32_t m = h & 0x7fffu;
  if (m > f.inf_bits()) return ::testing::AssertionFailure() << "finite " << x << " became NaN";
  const double ax = std::fabs(static_cast<double>(x));
  if (m == f.inf_bits()) {  // overflow: only from the midpoint above the largest finite value
    const double midpoint = (magnitude_value(f, m - 1) + magnitude_value(f, m)) / 2;
    if (ax >= midpoint) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << x << " overflowed to inf below " << midpoint;
  }
  const double err = std::fabs(ax - magnitude_value(f, m));
  if (m > 0 && std::fabs(ax - magnitude_value(f, m - 1)) < err)
    return ::testing::AssertionFailure() << x << " -> 0x" << std::hex << h << ": the pattern below is closer";
  if (m < f.inf_bits() && std::fabs(ax - magnitude_value(f, m + 1)) < err)
    return ::testing::AssertionFailure() << x << " -> 0x" << std::hex << h << ": the pattern above is closer";
  const bool tie = (m > 0 && std::fabs(ax - magnitude_value(f, m - 1)) == err) ||
                   (m < f.inf_bits() && std::fabs(ax - magnitude_value(f, m + 1)) == err);
  if (tie && (m & 1u))
    return ::testing::AssertionFailure() << x << " -> 0x" << std::hex << h << ": a tie must go to the even pattern";
  return ::testing::AssertionSuccess();
}

// All floats around every representable value of the format: the value, the exact midpoints
// to both neighbours, and one float ulp either side of those.
void check_all_neighbourhoods(const Format& f) {
  for (uint32_t m = 0; m <= f.inf_bits(); ++m) {
    const double v = magnitude_value(f, m);
    const double mids[] = {v, m > 0 ? (v + magnitude_value(f, m - 1)) / 2 : 0.0,
                           m < f.inf_bits() ? (v + magnitude_value(f, m + 1)) / 2 : v};
    for (double mid : mids) {
      if (mid >= 0x1p128) continue;  // not a float
      const float c = static_cast<float>(mid);  // exact: midpoints need only mant_bits + 2 bits
      for (float x : {c, std::nextafter(c, 0.0f), std::nextafter(c, INFINITY)}) {
        if (!std::isfinite(x)) continue;
        ASSERT_TRUE(rounds_to_nearest_even(f, x));
        ASSERT_TRUE(rounds_to_nearest_even(f, -x));
      }
    }
  }
}

// A sparse sweep over all 2^32 float patterns (every 257th), skipping NaN and inf.
void check_float_sweep(const Format& f) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 257) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (!std::isfinite(x)) continue;
    ASSERT_TRUE(rounds_to_nearest_even(f, x));
  }
}

TEST(Fp16, EveryHalfPatternRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = f16_to_f32(bits);
    const bool nan = (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
    if (nan) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      // F16C semantics: the payload survives, a signalling NaN comes back quiet.
      ASSERT_EQ(f32_to_f16(f), bits | 0x200u) << std::hex << h;
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), bits) << std::hex << h;
    const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
    const double expected = (bits & 0x7fffu) == kF16.inf_bits() ? INFINITY : magnitude_value(kF16, bits & 0x7fffu);
    ASSERT_EQ(static_cast<double>(f), sign * expected) << std::hex << h;
  }
}

TEST(Fp16, FloatToHalfRoundsToNearestEven) {
  check_all_neighbourhoods(kF16);
  check_float_sweep(kF16);
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00u);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000u);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bffu);                      // largest half
  EXPECT_EQ(f32_to_f16(65519.996f), 0x7bffu);                    // just below the midpoint
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00u);                      // midpoint: ties to even = inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00u);
  EXPECT_EQ(f32_to_f16(0x1p-14f), 0x0400u);                      // smallest normal
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001u);                      // smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000u);                      // tie between 0 and 2^-24: even
  EXPECT_EQ(f32_to_f16(0x1.8p-25f), 0x0001u);
  EXPECT_EQ(f32_to_f16(0x1.ff8p-15f), 0x03ffu);                  // largest subnormal
  EXPECT_EQ(f32_to_f16(0x1.ffcp-15f), 0x0400u);                  // tie above it rounds into the normals
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000u);
  EXPECT_EQ(f32_to_f16(-1e-30f), 0x8000u);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_f16(INFINITY), 0x7c00u);
  EXPECT_EQ(f32_to_f16(-INFINITY), 0xfc00u);
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00u);               // tie, 0x3c00 is even
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02u);           // tie, 0x3c02 is even
  EXPECT_EQ(f16_to_f32(0x3555u), 0x1.554p-2f);
  EXPECT_EQ(f16_to_f32(0x0001u), 0x1p-24f);
}

TEST(Fp16, NanStaysNanWithPayload) {
  const float qnan = std::bit_cast<float>(0x7fc00000u | (0x155u << 13));
  EXPECT_EQ(f32_to_f16(qnan), 0x7e00u | 0x155u);
  const float snan = std::bit_cast<float>(0xff800000u | (0x100u << 13));  // signalling, negative
  EXPECT_EQ(f32_to_f16(snan), 0xfe00u | 0x100u);                          // quieted, sign kept
  const float low_payload = std::bit_cast<float>(0x7f800001u);  // payload below the kept bits
  EXPECT_EQ(f32_to_f16(low_payload), 0x7e00u);                  // still NaN, not inf
  EXPECT_EQ(std::bit_cast<uint32_t>(f16_to_f32(0x7c01u)), 0x7fc02000u);
}

TEST(Bf16, EveryPatternRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = bf16_to_f32(bits);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), h << 16);
    const bool nan = (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0;
    ASSERT_EQ(f32_to_bf16(f), nan ? (bits | 0x40u) : bits) << std::hex << h;
  }
}

TEST(Bf16, FloatToBf16RoundsToNearestEven) {
  check_all_neighbourhoods(kBF16);
  check_float_sweep(kBF16);
}

TEST(Bf16, KnownValues) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80u);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80u);       // tie to even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82u);   // tie to even (up)
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80u);  // rounds up to inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_bf16(0x1p-133f), 0x0001u);            // subnormals are kept
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xff80u);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f800001u)), 0x7fc0u);  // NaN, never inf
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0xffc12345u)), 0xffc1u);
}

}  // namespace
}  // namespace nanoserve::tensor
