// Activation quantization mirrors llama.cpp's x86 quantize_row_q8_0 / q8_1 and ggml's q8_K.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/activations.h"
#include "kernels/every_target.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace nanoserve::kernels {
namespace {

TEST(Q8Block32, ScaleMultiplierAndRoundingAreLlamaCppX86s) {
  // amax 127 makes the multiplier exactly 1: 2.5 rounds to even (2), not away from zero (3).
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -3.5f;
  x[3] = 0.49f;
  std::vector<int8_t> q(32);
  std::vector<uint8_t> u(32);
  float d, s;
  int32_t minus_128_sum;
  quantize_q8_block32(x.data(), 32, q.data(), &d, &s, u.data(), &minus_128_sum);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(u[i], q[i] + 128);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 2);
  EXPECT_EQ(q[2], -4);
  EXPECT_EQ(q[3], 0);
  EXPECT_EQ(d, 1.0f);
  EXPECT_EQ(s, 127.0f + 2 - 4);
  EXPECT_EQ(minus_128_sum, -128 * (127 + 2 - 4));
}

TEST(Q8Block32, ZeroBlockAndFp16Scales) {
  std::vector<float> x(64, 0.0f);
  for (int i = 32; i < 64; ++i) x[i] = 0.001f * (i - 40);
  std::vector<int8_t> q(64);
  std::vector<uint8_t> u(64);
  float d[2], s[2];
  int32_t minus_128_sums[2];
  quantize_q8_block32(x.data(), 64, q.data(), d, s, u.data(), minus_128_sums);
  EXPECT_EQ(d[0], 0.0f);
  EXPECT_EQ(s[0], 0.0f);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i], 0);
  const float amax = 0.023f;
  EXPECT_EQ(d[1], tensor::f16_to_f32(tensor::f32_to_f16(amax / 127.0f)));
  for (int i = 32; i < 64; ++i) EXPECT_NEAR(q[i] * (amax / 127.0f), x[i], amax / 127.0f / 2 + 1e-7f);
}

TEST(Q8K, EqualsTheTensorRoomsQuantizer) {
  std::vector<float> x(512);
  for (int i = 0; i < 512; ++i) x[i] = std::sin(0.37f * i) * (i < 256 ? 1.0f : 30.0f);
  std::vector<int8_t> q(512);
  float d[2];
  int16_t bsums[32];
  quantize_q8_k(x.data(), 512, q.data(), d, bsums);
  tensor::BlockQ8_K blocks[2];
  tensor::quantize_row(TensorType::Q8_K, x.data(), blocks, 512);
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(d[b], blocks[b].d);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(q[256 * b + i], blocks[b].qs[i]);
    for (int g = 0; g < 16; ++g) EXPECT_EQ(bsums[16 * b + g], blocks[b].bsums[g]);
  }
}

TEST(Activations, FormsFollowTheRowsAndAreMadeOnce) {
  std::vector<float> x = {1.0f, -2.0f, 0.333333f, 65520.0f};  // 65520 rounds to F16 infinity
  Activations acts;
  acts.set(x.data(), 2, 2, 2);
  acts.prepare(ActType::F16);
  acts.prepare(ActType::BF16);
  const FloatRows f16 = acts.float_rows(ActType::F16), bf16 = acts.float_rows(ActType::BF16);
  EXPECT_EQ(f16.row(0)[1], -2.0f);
  EXPECT_EQ(f16.row(1)[0], tensor::f16_to_f32(tensor::f32_to_f16(0.333333f)));
  EXPECT_NE(f16.row(1)[0], 0.333333f);
  EXPECT_EQ(f16.row(1)[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(bf16.row(1)[0], tensor::bf16_to_f32(tensor::f32_to_bf16(0.333333f)));
  EXPECT_NE(bf16.row(1)[0], f16.row(1)[0]);
  EXPECT_EQ(acts.f32(1)[1], 65520.0f);
}

// The SIMD quantizers equal the scalar ones bit for bit on every target: random rows, and
// blocks with the awkward cases (all zero, halves that round to even, the largest magnitude
// negative or present with both signs, tiny values).
TEST(Activations, SimdQuantizersEqualScalarOnEveryTarget) {
  const int64_t n = 1024;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  std::fill(x.begin(), x.begin() + 32, 0.0f);
  for (int j = 32; j < 64; ++j) x[j] = 0.5f * (j - 48);  // amax 8: multiplier 127/8, many .5 products
  x[300] = -50.0f;                                        // the second super-block's max is negative,
  x[301] = 50.0f;                                         // before its opposite in the same vector
  x[520] = 40.0f;
  x[530] = -40.0f;                                        // ±amax: the first one sets the sign
  for (int j = 768; j < 1024; ++j) x[j] = 1e-30f * (j % 7 - 3);

  const int64_t n32 = n - 96;  // 29 blocks of 32: the scales end in a part vector
  std::vector<int8_t> q_ref(n32), q(n32);
  std::vector<uint8_t> u_ref(n32), u(n32);
  std::vector<float> d_ref(n32 / 32), d(n32 / 32), s_ref(n32 / 32), s(n32 / 32);
  std::vector<int32_t> m_ref(n32 / 32), m(n32 / 32);
  quantize_q8_block32(x.data(), n32, q_ref.data(), d_ref.data(), s_ref.data(), u_ref.data(), m_ref.data());
  std::vector<int8_t> qk_ref(n), qk(n);
  std::vector<float> dk_ref(n / 256), dk(n / 256);
  std::vector<int16_t> bs_ref(n / 16), bs(n / 16);
  quantize_q8_k(x.data(), n, qk_ref.data(), dk_ref.data(), bs_ref.data());
  for (int64_t target : EverySimdTarget()) {
    quantize_q8_block32_simd(x.data(), n32, q.data(), d.data(), s.data(), u.data(), m.data());
    EXPECT_EQ(q, q_ref) << hwy::TargetName(target);
    EXPECT_EQ(u, u_ref) << hwy::TargetName(target);
    EXPECT_EQ(d, d_ref) << hwy::TargetName(target);
    EXPECT_EQ(s, s_ref) << hwy::TargetName(target);
    EXPECT_EQ(m, m_ref) << hwy::TargetName(target);
    quantize_q8_k_simd(x.data(), n, qk.data(), dk.data(), bs.data());
    EXPECT_EQ(qk, qk_ref) << hwy::TargetName(target);
    EXPECT_EQ(dk, dk_ref) << hwy::TargetName(target);
    EXPECT_EQ(bs, bs_ref) << hwy::TargetName(target);
  }
}

// Rounding activations to F16 / BF16 precision, and the KV cache's F16 conversion
// (f32_to_f16_row): the SIMD versions give the scalar conversions' values bit for bit on every
// target, at ties, at the edges of the F16 range (65504, the 65520 tie that goes to infinity,
// subnormals and their ties, below the smallest), signed zeros, infinities; a NaN stays a NaN.
TEST(Activations, SimdRoundingToHalfPrecisionEqualsScalarOnEveryTarget) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -2.0f, 0.333333f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e6f,
                          6.1035156e-05f, 6.0e-05f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 1e-9f, -1e-9f,
                          1.00048828125f, 1.00146484375f, 1.0f + 1.0f / 256 + 1.0f / 512, 3.0e38f, -3.4028235e38f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u),
                          std::bit_cast<float>(0xff812345u), std::bit_cast<float>(0x3f808000u),
                          std::bit_cast<float>(0x3f818000u), std::bit_cast<float>(0x7f7fffffu)};
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int i = 0; i < 1000; ++i) x.push_back(dist(rng));
  const auto same = [](float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  };
  std::vector<float> got(x.size());
  for (int64_t target : EverySimdTarget()) {
    const std::string name = hwy::TargetName(target);
    round_through_f16_simd(x.data(), static_cast<int64_t>(x.size()), got.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same(got[i], tensor::f16_to_f32(tensor::f32_to_f16(x[i])))) << name << " F16 " << x[i];
    std::vector<uint16_t> half(x.size());
    f32_to_f16_row(x.data(), static_cast<int64_t>(x.size()), half.data());  // the KV cache's conversion
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same(tensor::f16_to_f32(half[i]), tensor::f16_to_f32(tensor::f32_to_f16(x[i]))))
          << name << " F16 bits " << x[i];
    round_through_bf16_simd(x.data(), static_cast<int64_t>(x.size()), got.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(same(got[i], tensor::bf16_to_f32(tensor::f32_to_bf16(x[i])))) << name << " BF16 " << x[i];
  }
}

}  // namespace
}  // namespace nanoserve::kernels
