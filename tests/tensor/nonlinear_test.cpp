// IQ4_NL, IQ4_XS and MXFP4: our quantizers against the bytes llama.cpp's ggml_quantize_chunk
// (what llama-quantize calls) wrote for the same inputs, with and without an imatrix
// (tests/tensor/data/nonlinear/README.md says how they were made); hand-built blocks decoding to
// hand-computed values; and the round trip's quality on random rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"
#include "support/test_paths.h"

namespace nanoserve::tensor {
namespace {

using T = gguf::TensorType;

constexpr int64_t kGoldenRows = 8, kGoldenCols = 512;

std::vector<float> read_floats(const std::string& name) {
  const std::string bytes = test::read_file(test::source_path("tests/tensor/data/nonlinear/" + name));
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

std::string golden_bytes(const std::string& name) {
  return test::read_file(test::source_path("tests/tensor/data/nonlinear/" + name));
}

struct GoldenCase {
  T type;
  const char* file;
  bool imatrix;
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.file; }

class NonlinearGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(NonlinearGolden, QuantizingEqualsLlamaQuantizeByteForByte) {
  const GoldenCase c = GetParam();
  const std::vector<float> x = read_floats("input.f32");
  const std::vector<float> imatrix = read_floats("imatrix.f32");
  ASSERT_EQ(x.size(), static_cast<size_t>(kGoldenRows * kGoldenCols));
  ASSERT_EQ(imatrix.size(), static_cast<size_t>(kGoldenCols));
  const std::string golden = golden_bytes(c.file);
  const uint64_t row_bytes = *gguf::row_bytes(c.type, kGoldenCols);
  ASSERT_EQ(golden.size(), row_bytes * kGoldenRows);
  for (int64_t r = 0; r < kGoldenRows; ++r) {
    std::vector<uint8_t> ours(row_bytes);
    const float* row = x.data() + r * kGoldenCols;
    if (c.imatrix)
      quantize_row_with_importance(c.type, row, imatrix.data(), ours.data(), kGoldenCols);
    else
      quantize_row(c.type, row, ours.data(), kGoldenCols);
    const auto* want = reinterpret_cast<const uint8_t*>(golden.data()) + r * row_bytes;
    for (uint64_t i = 0; i < row_bytes; ++i)
      ASSERT_EQ(ours[i], want[i]) << "row " << r << ", byte " << i << " (block " << i / gguf::type_info(c.type).block_bytes
                                  << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, NonlinearGolden,
                         ::testing::Values(GoldenCase{T::IQ4_NL, "iq4_nl.bin", false},
                                           GoldenCase{T::IQ4_NL, "iq4_nl-imatrix.bin", true},
                                           GoldenCase{T::IQ4_XS, "iq4_xs.bin", false},
                                           GoldenCase{T::IQ4_XS, "iq4_xs-imatrix.bin", true},
                                           GoldenCase{T::MXFP4, "mxfp4.bin", false},
                                           GoldenCase{T::MXFP4, "mxfp4-imatrix.bin", true}),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return std::string(gguf::type_name(info.param.type)) +
                                  (info.param.imatrix ? "_imatrix" : "_plain");
                         });

// The importance weights change the IQ4 search (else the imatrix goldens would test nothing).
TEST(NonlinearGolden, ImatrixChangesTheIq4Bytes) {
  for (const char* type : {"iq4_nl", "iq4_xs"})
    EXPECT_NE(golden_bytes(std::string(type) + ".bin"), golden_bytes(std::string(type) + "-imatrix.bin")) << type;
}

TEST(NonlinearApi, ImportanceOnlyForTheTypesWhoseSearchWeReproduce) {
  std::vector<float> x(256, 1.0f), w(256, 1.0f);
  std::vector<uint8_t> q(1024);
  EXPECT_THROW(quantize_row_with_importance(T::Q4_K, x.data(), w.data(), q.data(), 256), std::invalid_argument);
  EXPECT_THROW(quantize_row_with_importance(T::IQ2_XXS, x.data(), w.data(), q.data(), 256), std::invalid_argument);
  EXPECT_THROW(quantize_row_with_importance(T::IQ4_XS, x.data(), w.data(), q.data(), 32), std::invalid_argument);
  EXPECT_NO_THROW(quantize_row_with_importance(T::IQ4_NL, x.data(), nullptr, q.data(), 256));
}

// ---- hand-built blocks ------------------------------------------------------------------

std::vector<float> decode(T t, const std::vector<uint8_t>& block) {
  std::vector<float> y(gguf::type_info(t).block_elems);
  dequantize_row(t, block.data(), y.data(), static_cast<int64_t>(y.size()));
  return y;
}

TEST(NonlinearLayout, IQ4_NL) {
  std::vector<uint8_t> b(18, 0);
  const uint16_t d = f32_to_f16(0.5f);
  std::memcpy(b.data(), &d, 2);
  b[2] = 0x3f;       // element 0: index 15, element 16: index 3
  b[2 + 15] = 0x80;  // element 15: index 0, element 31: index 8
  const auto y = decode(T::IQ4_NL, b);
  EXPECT_EQ(y[0], 0.5f * 113);
  EXPECT_EQ(y[16], 0.5f * -65);
  EXPECT_EQ(y[15], 0.5f * -127);
  EXPECT_EQ(y[31], 0.5f * 1);
  EXPECT_EQ(y[1], 0.5f * -127);
}

TEST(NonlinearLayout, IQ4_XS) {
  std::vector<uint8_t> b(136, 0);
  const uint16_t d = f32_to_f16(0.25f);
  std::memcpy(b.data(), &d, 2);
  // Sub-block 0's scale 33: low bits 1 in scales_l[0]'s low nibble, high bits 2 in bits 0-1.
  // Sub-block 3's scale 0x2b = 43: low nibble 0xb in scales_l[1]'s high nibble, high bits 2 in
  // bits 6-7 of scales_h. Sub-block 7's 0x3f: high nibble of scales_l[3], bits 14-15.
  b[4] = 0x01;
  b[5] = 0xb0;
  b[7] = 0xf0;
  const uint16_t sh = (2u << 0) | (2u << 6) | (3u << 14);
  std::memcpy(b.data() + 2, &sh, 2);
  b[8] = 0x0f;                // sub-block 0, element 0: index 15; element 16: index 0
  b[8 + 3 * 16 + 1] = 0x90;  // sub-block 3, element 1: index 0; element 17: index 9
  b[8 + 7 * 16 + 15] = 0x7e; // sub-block 7, element 15: index 14; element 31: index 7
  const auto y = decode(T::IQ4_XS, b);
  EXPECT_EQ(y[0], 0.25f * (33 - 32) * 113);  // 1 | 2 << 4 = 33
  EXPECT_EQ(y[16], 0.25f * (33 - 32) * -127);
  EXPECT_EQ(y[96 + 1], 0.25f * (43 - 32) * -127);
  EXPECT_EQ(y[96 + 17], 0.25f * (43 - 32) * 13);
  EXPECT_EQ(y[224 + 15], 0.25f * (63 - 32) * 89);
  EXPECT_EQ(y[224 + 31], 0.25f * (63 - 32) * -10);
  EXPECT_EQ(y[32], 0.25f * (0 - 32) * -127);  // sub-block 1: scale bits all zero
}

TEST(NonlinearLayout, MXFP4) {
  std::vector<uint8_t> b(17, 0);
  b[0] = 130;  // 2^(130 - 128) = 4 per doubled level
  b[1] = 0xf7;  // element 0: index 7 (+12), element 16: index 15 (-12)
  b[1 + 5] = 0x95;  // element 5: index 5 (+6), element 21: index 9 (-1)
  const auto y = decode(T::MXFP4, b);
  EXPECT_EQ(y[0], 48.0f);   // 6.0 (E2M1's largest) * 2^3
  EXPECT_EQ(y[16], -48.0f);
  EXPECT_EQ(y[5], 24.0f);
  EXPECT_EQ(y[21], -4.0f);
  EXPECT_EQ(y[1], 0.0f);
  // The smallest exponents are float subnormals: 2^-128 and 2^-127 per doubled level.
  b[0] = 0;
  EXPECT_EQ(decode(T::MXFP4, b)[0], std::ldexp(12.0f, -128));
  b[0] = 1;
  EXPECT_EQ(decode(T::MXFP4, b)[0], std::ldexp(12.0f, -127));
  b[0] = 254;
  EXPECT_EQ(decode(T::MXFP4, b)[5], std::ldexp(6.0f, 126));
}

// ---- round trip -------------------------------------------------------------------------

// RMS error / RMS input for Gaussian rows. Rounding to the nearest of levels D apart gives
// 0.29 D; IQ4's 16 levels span 240 steps of d around absmax / 127 (about 2.1 / 127 for a
// Gaussian block of 32), about 15 apart near zero where most values are, so about 0.29 * 15 *
// 2.1 / 127 = 7%, less after the scale search; MXFP4's 15 values, power-of-two scale and
// levels that double in spacing leave up to twice Q4_0's error. The bounds sit well above
// what an honest quantizer gives and below a broken one.
double max_rel_rms(T type) {
  switch (type) {
    case T::IQ4_NL: return 0.09;
    case T::IQ4_XS: return 0.10;
    default: return 0.16;  // MXFP4
  }
}

class NonlinearRoundTrip : public ::testing::TestWithParam<T> {};

TEST_P(NonlinearRoundTrip, GaussianRowsStayClose) {
  const T type = GetParam();
  constexpr int64_t n = 8192;
  std::mt19937_64 rng(0x1a4u + static_cast<uint32_t>(type));
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<float> x(n), y(n);
  for (float& v : x) v = static_cast<float>(dist(rng));
  // Every 5th 32-block all zero: it must decode to zeros.
  for (int64_t i = 0; i < n; ++i)
    if ((i / 32) % 5 == 0) x[i] = 0.0f;
  std::vector<uint8_t> q(*gguf::row_bytes(type, n)), again(q.size());
  quantize_row(type, x.data(), q.data(), n);
  dequantize_row(type, q.data(), y.data(), n);
  double err = 0, ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    if ((i / 32) % 5 == 0) {
      ASSERT_EQ(y[i], 0.0f) << "element " << i << " of a zero block";
    }
    err += (y[i] - x[i]) * static_cast<double>(y[i] - x[i]);
    ref += static_cast<double>(x[i]) * x[i];
  }
  const double rel = std::sqrt(err / ref);
  EXPECT_LE(rel, max_rel_rms(type));
  std::cout << "  " << gguf::type_name(type) << " relative RMS error " << rel << "\n";
  quantize_row(type, x.data(), again.data(), n);
  EXPECT_EQ(q, again);
}

INSTANTIATE_TEST_SUITE_P(Types, NonlinearRoundTrip, ::testing::Values(T::IQ4_NL, T::IQ4_XS, T::MXFP4),
                         [](const ::testing::TestParamInfo<T>& info) { return std::string(gguf::type_name(info.param)); });

}  // namespace
}  // namespace nanoserve::tensor
