// On-disk block layouts of the quantized GGUF weight types (the same bytes ggml writes).
// A "half" field holds IEEE binary16 bits (see fp16.h). Multi-byte fields are little-endian,
// which is also this host's order (checked below).
//
// The row functions never cast a raw byte pointer to these structs: they memcpy each block
// in or out, so a tensor may start at any address.
//
// Sizes are checked here against literals and, in tests/tensor, against gguf::type_info():
// that table is not constexpr, so a static_assert cannot read it.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace nanoserve::tensor {

static_assert(std::endian::native == std::endian::little, "block layouts assume a little-endian host");

inline constexpr int kLegacyBlock = 32;  // elements per Q4_0 .. Q8_0 block
inline constexpr int kSuperBlock = 256;  // elements per K-quant super-block (QK_K)

// ---- legacy types: 32 elements, one scale (and min) per block --------------------------

// x = d * (q - 8), q in 0..15. Element j is the low nibble of qs[j], element j+16 the high one.
struct BlockQ4_0 {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  uint8_t qs[kLegacyBlock / 2];
};

// x = d * q + m, q in 0..15; nibbles as Q4_0.
struct BlockQ4_1 {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  uint16_t m;
  uint8_t qs[kLegacyBlock / 2];
};

// x = d * (q - 16), q in 0..31: low 4 bits as Q4_0, bit 4 of element j is bit j of qh (u32 LE).
struct BlockQ5_0 {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kLegacyBlock / 2];
};

// x = d * q + m, q in 0..31; bits as Q5_0.
struct BlockQ5_1 {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kLegacyBlock / 2];
};

// x = d * q, q in -127..127.
struct BlockQ8_0 {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  int8_t qs[kLegacyBlock];
};

// ---- K-quants: 256 elements in sub-blocks of 16 or 32 ----------------------------------
// Elements are grouped in chunks of 128 (Q2_K, Q3_K, Q6_K) or 64 (Q4_K, Q5_K); within a
// chunk, the 2-bit / 4-bit fields of the 32-element groups share bytes (see k_quants.cpp).

// 16 sub-blocks of 16: x = d * sc * q - dmin * m, q in 0..3; sc (low nibble) and m (high
// nibble) of scales[j] are 4-bit.
struct BlockQ2_K {
  static constexpr int kElems = kSuperBlock;
  uint8_t scales[kSuperBlock / 16];
  uint8_t qs[kSuperBlock / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16: x = d * (sc - 32) * (q - 4), q in 0..7 (2 low bits in qs, the third
// in hmask); sc is 6-bit, packed in 12 bytes.
struct BlockQ3_K {
  static constexpr int kElems = kSuperBlock;
  uint8_t hmask[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 4];
  uint8_t scales[12];
  uint16_t d;
};

// 8 sub-blocks of 32: x = d * sc * q - dmin * m, q in 0..15; sc and m 6-bit, packed in 12 bytes.
struct BlockQ4_K {
  static constexpr int kElems = kSuperBlock;
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kSuperBlock / 2];
};

// As Q4_K with a fifth bit per element in qh: q in 0..31.
struct BlockQ5_K {
  static constexpr int kElems = kSuperBlock;
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kSuperBlock / 8];
  uint8_t qs[kSuperBlock / 2];
};

// 16 sub-blocks of 16: x = d * sc * (q - 32), q in 0..63 (4 low bits in ql, 2 high in qh);
// sc is a signed byte.
struct BlockQ6_K {
  static constexpr int kElems = kSuperBlock;
  uint8_t ql[kSuperBlock / 2];
  uint8_t qh[kSuperBlock / 4];
  int8_t scales[kSuperBlock / 16];
  uint16_t d;
};

// ---- non-linear 4-bit types: a nibble indexes a table of levels ------------------------

// The 16 levels of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl): denser near zero, where most
// weights lie.
inline constexpr int8_t kIQ4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// MXFP4's E2M1 values doubled (0, 0.5, 1, ... 6 become integers); its scale is halved to match.
inline constexpr int8_t kMXFP4Levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// x = d * kIQ4Levels[q]; nibbles as Q4_0.
struct BlockIQ4_NL {
  static constexpr int kElems = kLegacyBlock;
  uint16_t d;
  uint8_t qs[kLegacyBlock / 2];
};

// 8 sub-blocks of 32: x = d * (sc - 32) * kIQ4Levels[q], sc 6-bit: low 4 bits in nibble j % 2
// of scales_l[j / 2], high 2 bits in bits 2j, 2j+1 of scales_h. Each sub-block's nibbles as Q4_0.
struct BlockIQ4_XS {
  static constexpr int kElems = kSuperBlock;
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kSuperBlock / 64];
  uint8_t qs[kSuperBlock / 2];
};

// OCP microscaling FP4: x = 2^(e - 128) * kMXFP4Levels[q] (e an E8M0 exponent); nibbles as Q4_0.
struct BlockMXFP4 {
  static constexpr int kElems = kLegacyBlock;
  uint8_t e;
  uint8_t qs[kLegacyBlock / 2];
};

// Activation type for K-quant dot products: x = d * q, float d; bsums[j] = sum of q over
// elements 16j .. 16j+15.
struct BlockQ8_K {
  static constexpr int kElems = kSuperBlock;
  float d;
  int8_t qs[kSuperBlock];
  int16_t bsums[kSuperBlock / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);

template <class B>
inline constexpr bool kIsBlock = std::is_trivially_copyable_v<B> && std::is_standard_layout_v<B>;
static_assert(kIsBlock<BlockQ4_0> && kIsBlock<BlockQ4_1> && kIsBlock<BlockQ5_0> && kIsBlock<BlockQ5_1> &&
              kIsBlock<BlockQ8_0> && kIsBlock<BlockQ2_K> && kIsBlock<BlockQ3_K> && kIsBlock<BlockQ4_K> &&
              kIsBlock<BlockQ5_K> && kIsBlock<BlockQ6_K> && kIsBlock<BlockQ8_K> && kIsBlock<BlockIQ4_NL> &&
              kIsBlock<BlockIQ4_XS> && kIsBlock<BlockMXFP4>);

// MXFP4's scale 2^(e - 128): half of E8M0's 2^(e - 127), for the doubled levels. Built from its
// bits (e = 0 and 1 are subnormal floats), as ggml does.
inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

}  // namespace nanoserve::tensor
