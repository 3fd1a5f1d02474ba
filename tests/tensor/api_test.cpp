// The row API: which types it supports, argument checks, block sizes against the GGUF type
// table, and hand-built blocks decoding to hand-computed values (layout checks that do not
// depend on our own quantizers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gguf/types.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace nanoserve::tensor {
namespace {

using T = gguf::TensorType;

const T kSupported[] = {T::F32,  T::F16,  T::BF16, T::Q8_0, T::Q4_0, T::Q4_1,   T::Q5_0,   T::Q5_1,
                        T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::Q8_K, T::IQ4_NL, T::IQ4_XS, T::MXFP4};

TEST(TensorApi, SupportsExactlyTheListedTypes) {
  for (T t : kSupported) {
    EXPECT_TRUE(can_dequantize(t)) << gguf::type_name(t);
    EXPECT_TRUE(can_quantize(t)) << gguf::type_name(t);
  }
  for (T t : {T::Q8_1, T::IQ2_XXS, T::IQ2_XS, T::IQ2_S, T::IQ3_XXS, T::IQ3_S, T::IQ1_S, T::IQ1_M, T::I8, T::F64,
              T::TQ1_0}) {
    EXPECT_FALSE(can_dequantize(t)) << gguf::type_name(t);
    EXPECT_FALSE(can_quantize(t)) << gguf::type_name(t);
  }
}

TEST(TensorApi, BlockStructsMatchTheGgufTypeTable) {
  auto check = [](T t, size_t bytes, int elems) {
    EXPECT_EQ(gguf::type_info(t).block_bytes, bytes) << gguf::type_name(t);
    EXPECT_EQ(gguf::type_info(t).block_elems, static_cast<uint32_t>(elems)) << gguf::type_name(t);
  };
  check(T::Q4_0, sizeof(BlockQ4_0), BlockQ4_0::kElems);
  check(T::Q4_1, sizeof(BlockQ4_1), BlockQ4_1::kElems);
  check(T::Q5_0, sizeof(BlockQ5_0), BlockQ5_0::kElems);
  check(T::Q5_1, sizeof(BlockQ5_1), BlockQ5_1::kElems);
  check(T::Q8_0, sizeof(BlockQ8_0), BlockQ8_0::kElems);
  check(T::Q2_K, sizeof(BlockQ2_K), BlockQ2_K::kElems);
  check(T::Q3_K, sizeof(BlockQ3_K), BlockQ3_K::kElems);
  check(T::Q4_K, sizeof(BlockQ4_K), BlockQ4_K::kElems);
  check(T::Q5_K, sizeof(BlockQ5_K), BlockQ5_K::kElems);
  check(T::Q6_K, sizeof(BlockQ6_K), BlockQ6_K::kElems);
  check(T::Q8_K, sizeof(BlockQ8_K), BlockQ8_K::kElems);
  check(T::IQ4_NL, sizeof(BlockIQ4_NL), BlockIQ4_NL::kElems);
  check(T::IQ4_XS, sizeof(BlockIQ4_XS), BlockIQ4_XS::kElems);
  check(T::MXFP4, sizeof(BlockMXFP4), BlockMXFP4::kElems);
  check(T::F32, sizeof(float), 1);
  check(T::F16, sizeof(uint16_t), 1);
  check(T::BF16, sizeof(uint16_t), 1);
}

TEST(TensorApi, RejectsBadArguments) {
  std::vector<float> f(512);
  std::vector<uint8_t> b(4096);
  EXPECT_THROW(dequantize_row(T::Q4_0, b.data(), f.data(), 31), std::invalid_argument);
  EXPECT_THROW(quantize_row(T::Q4_K, f.data(), b.data(), 255), std::invalid_argument);
  EXPECT_THROW(quantize_row(T::Q8_0, f.data(), b.data(), -32), std::invalid_argument);
  EXPECT_THROW(dequantize_row(T::IQ2_XS, b.data(), f.data(), 256), std::invalid_argument);
  EXPECT_THROW(quantize_row(static_cast<T>(999), f.data(), b.data(), 256), std::invalid_argument);
  EXPECT_NO_THROW(quantize_row(T::Q4_K, f.data(), b.data(), 0));
  EXPECT_NO_THROW(dequantize_row(T::F16, b.data(), f.data(), 3));
}

TEST(TensorApi, RowsNeedNoAlignment) {
  std::vector<float> x(512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 37) - 18.0f;
  for (T t : kSupported) {
    const size_t bytes = *gguf::row_bytes(t, x.size());
    std::vector<uint8_t> aligned(bytes), odd(bytes + 1);
    quantize_row(t, x.data(), aligned.data(), 512);
    quantize_row(t, x.data(), odd.data() + 1, 512);
    ASSERT_EQ(std::memcmp(aligned.data(), odd.data() + 1, bytes), 0) << gguf::type_name(t);
    std::vector<float> y1(512), y2(512);
    dequantize_row(t, aligned.data(), y1.data(), 512);
    dequantize_row(t, odd.data() + 1, y2.data(), 512);
    ASSERT_EQ(y1, y2) << gguf::type_name(t);
  }
}

// NaN and inf give unspecified blocks, but no undefined behaviour (run under the sanitizers),
// and the blocks without them are unaffected.
TEST(TensorApi, NonFiniteInputStaysContained) {
  constexpr int64_t n = 1024;
  std::vector<float> x(n, 0.5f);
  x[3] = NAN;
  x[40] = INFINITY;
  x[300] = -INFINITY;
  const std::vector<float> finite(n, 0.5f);
  for (T t : kSupported) {
    const size_t bytes = *gguf::row_bytes(t, n);
    std::vector<uint8_t> q(bytes), clean(bytes);
    std::vector<float> y(n);
    quantize_row(t, x.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);
    quantize_row(t, finite.data(), clean.data(), n);
    const size_t half = bytes / 2;  // elements 512..1023: whole blocks of every type
    EXPECT_EQ(std::memcmp(q.data() + half, clean.data() + half, half), 0) << gguf::type_name(t);
  }
}

// ---- hand-built blocks ------------------------------------------------------------------
// Each sets a few fields by byte offset and checks the elements they address.

std::vector<float> decode(T t, const std::vector<uint8_t>& block) {
  std::vector<float> y(gguf::type_info(t).block_elems);
  dequantize_row(t, block.data(), y.data(), static_cast<int64_t>(y.size()));
  return y;
}

void put_half(std::vector<uint8_t>& b, size_t at, float v) {
  const uint16_t h = f32_to_f16(v);
  b[at] = static_cast<uint8_t>(h);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}

TEST(TensorLayout, Q4_0AndQ4_1) {
  std::vector<uint8_t> b(18, 0);
  put_half(b, 0, 0.5f);
  b[2 + 3] = 0xA1;  // element 3: level 1, element 19: level 10
  auto y = decode(T::Q4_0, b);
  EXPECT_EQ(y[3], (1 - 8) * 0.5f);
  EXPECT_EQ(y[19], (10 - 8) * 0.5f);
  EXPECT_EQ(y[0], -4.0f);

  std::vector<uint8_t> c(20, 0);
  put_half(c, 0, 0.25f);
  put_half(c, 2, -1.0f);
  c[4 + 15] = 0xF2;  // element 15: level 2, element 31: level 15
  y = decode(T::Q4_1, c);
  EXPECT_EQ(y[15], 2 * 0.25f - 1.0f);
  EXPECT_EQ(y[31], 15 * 0.25f - 1.0f);
  EXPECT_EQ(y[1], -1.0f);
}

TEST(TensorLayout, Q5_0AndQ5_1) {
  std::vector<uint8_t> b(22, 0);
  put_half(b, 0, 1.0f);
  b[2 + 0] = 0x01;  // qh bit 0: element 0 gets +16
  b[2 + 3] = 0x80;  // qh bit 31: element 31 gets +16
  b[6 + 0] = 0x3F;  // element 0 low 15, element 16 low 3
  b[6 + 15] = 0x20; // element 31 low 2
  auto y = decode(T::Q5_0, b);
  EXPECT_EQ(y[0], 31 - 16);
  EXPECT_EQ(y[16], 3 - 16);
  EXPECT_EQ(y[31], 18 - 16);

  std::vector<uint8_t> c(24, 0);
  put_half(c, 0, 2.0f);
  put_half(c, 2, 0.5f);
  c[4 + 2] = 0x01;  // qh bit 16: element 16 gets +16
  c[8 + 0] = 0x70;  // element 16 low 7
  y = decode(T::Q5_1, c);
  EXPECT_EQ(y[16], 23 * 2.0f + 0.5f);
  EXPECT_EQ(y[0], 0.5f);
}

TEST(TensorLayout, Q8_0AndQ8_K) {
  std::vector<uint8_t> b(34, 0);
  put_half(b, 0, 0.125f);
  b[2 + 5] = static_cast<uint8_t>(-100);
  auto y = decode(T::Q8_0, b);
  EXPECT_EQ(y[5], -12.5f);

  std::vector<uint8_t> c(292, 0);
  const float d = 0.75f;
  std::memcpy(c.data(), &d, 4);
  c[4 + 200] = 7;
  y = decode(T::Q8_K, c);
  EXPECT_EQ(y[200], 5.25f);
  EXPECT_EQ(y[199], 0.0f);
}

TEST(TensorLayout, Q2_K) {
  std::vector<uint8_t> b(84, 0);
  put_half(b, 80, 0.5f);   // d
  put_half(b, 82, 0.25f);  // dmin
  b[9] = 0x32;             // sub-block 9 (elements 144..159): scale 2, min 3
  // Element 150 = chunk 1, group 0 (shift 0), byte 16 + 32 + 22.
  b[16 + 32 + 22] = 0x03;
  // Element 200 = chunk 1, group 2 (shift 4), byte 16 + 32 + 8; sub-block 12 = 0.
  b[16 + 32 + 8] = 0x20;
  b[12] = 0x11;
  auto y = decode(T::Q2_K, b);
  EXPECT_EQ(y[150], 0.5f * 2 * 3 - 0.25f * 3);
  EXPECT_EQ(y[144], -0.25f * 3);
  EXPECT_EQ(y[200], 0.5f * 1 * 2 - 0.25f * 1);
}

TEST(TensorLayout, Q3_K) {
  std::vector<uint8_t> b(110, 0);
  put_half(b, 108, 0.5f);
  // Sub-block 13 (elements 208..223): stored scale 45 = low 13 (high nibble of byte 96+5),
  // high 2 (bits 6-7 of byte 96+8+1). Signed scale 45 - 32 = 13.
  b[96 + 5] = 0xD0;
  b[96 + 8 + 1] = 0x80;
  // Element 210 = chunk 1, group 2, l = 18: qs byte 32 + 32 + 18 bits 4-5; hmask[18] bit 6.
  b[32 + 32 + 18] = 0x30;  // low bits 3
  b[18] = 0x40;            // high bit set: level 3 + 4 = 7 -> 7 - 4 = 3
  auto y = decode(T::Q3_K, b);
  EXPECT_EQ(y[210], 0.5f * 13 * 3);
  EXPECT_EQ(y[208], 0.5f * 13 * -4);  // high bit clear, low 0: level -4
  // Every other sub-block has stored scale 0, i.e. -32.
  EXPECT_EQ(y[0], 0.5f * -32 * -4);
}

TEST(TensorLayout, Q4_KAndQ5_K) {
  for (T t : {T::Q4_K, T::Q5_K}) {
    const bool five = t == T::Q5_K;
    std::vector<uint8_t> b(five ? 176 : 144, 0);
    const size_t qs = five ? 48 : 16;
    put_half(b, 0, 0.5f);
    put_half(b, 2, 0.25f);
    // Sub-block 6 (elements 192..223): scale 37 = 0b10'0101, min 50 = 0b11'0010.
    b[4 + 10] = 0x25;  // low nibbles: scale 5, min 2
    b[4 + 2] = 0x80;   // scale high bits 2 (byte j-4)
    b[4 + 6] = 0xC0;   // min high bits 3 (byte j)
    // Element 200 = chunk 3 (elements 192..255), low nibble of byte 8.
    b[qs + 96 + 8] = 0x09;
    if (five) b[16 + 8] = 0x40;  // qh[8] bit 6: +16
    auto y = decode(t, b);
    const int level = five ? 25 : 9;
    EXPECT_EQ(y[200], 0.5f * 37 * level - 0.25f * 50) << gguf::type_name(t);
    EXPECT_EQ(y[192], -0.25f * 50) << gguf::type_name(t);
    EXPECT_EQ(y[0], 0.0f) << gguf::type_name(t);
  }
}

TEST(TensorLayout, Q6_K) {
  std::vector<uint8_t> b(210, 0);
  put_half(b, 208, 0.5f);
  b[192 + 14] = static_cast<uint8_t>(-3);  // sub-block 14: elements 224..239
  // Element 230 = chunk 1, group 3, l = 6: high nibble of ql[64 + 32 + 6], qh[32 + 6] bits 6-7.
  b[64 + 32 + 6] = 0xB0;  // low 11
  b[128 + 32 + 6] = 0x80; // high 2 -> level 43
  auto y = decode(T::Q6_K, b);
  EXPECT_EQ(y[230], 0.5f * -3 * (43 - 32));
  EXPECT_EQ(y[224], 0.5f * -3 * -32);
  EXPECT_EQ(y[0], 0.0f);
}

}  // namespace
}  // namespace nanoserve::tensor
