// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: one fp16 scale (and min) per 32 elements.
//
// The quantizers reproduce ggml's reference row quantizers (what llama-quantize writes
// without an imatrix) bit for bit, so every choice below is theirs, not ours:
//  * the scale is computed in float and only the stored copy is rounded to fp16; the
//    levels are chosen with the unrounded scale's reciprocal;
//  * Q4_0/Q5_0 map the signed value of largest magnitude to the lowest level (-8 / -16),
//    so the opposite extreme can be clipped by one step;
//  * Q4_x/Q5_x round by truncating v + 0.5 (v >= 0 here), Q8_0 rounds half away from zero.
// Keep the float operations in this order: a reordering changes rounding and the bytes.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace nanoserve::tensor {
namespace {

constexpr int kHalf = kLegacyBlock / 2;

// Truncates v (already offset by +0.5) to a level in 0..top. Equal to ggml's
// min(top, (int)v) for the values a finite block produces; a NaN gives 0 instead of UB.
int trunc_to_level(float v, int top) {
  if (!(v > 0.0f)) return 0;
  return v < static_cast<float>(top) ? static_cast<int>(v) : top;
}

// ggml's roundf (half away from zero) into -127..127. For a finite block |v| <= 127 already;
// the clamp only keeps NaN or inf input from being undefined behaviour.
int8_t round_to_q8(float v) {
  const float r = std::round(v);
  return std::isnan(r) ? int8_t{0} : static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
}

// The element of largest magnitude, with its sign (the first one on ties).
float signed_absmax(const float* x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kLegacyBlock; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

struct Range {
  float min = FLT_MAX;
  float max = -FLT_MAX;
};

Range range_of(const float* x) {
  Range r;
  for (int j = 0; j < kLegacyBlock; ++j) {
    r.min = std::min(r.min, x[j]);
    r.max = std::max(r.max, x[j]);
  }
  return r;
}

// 5-bit types keep bit 4 of element j in bit j of a little-endian u32.
uint32_t load_qh(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 | static_cast<uint32_t>(qh[2]) << 16 |
         static_cast<uint32_t>(qh[3]) << 24;
}

void store_qh(uint8_t* qh, uint32_t v) {
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Packs 5-bit levels: low nibbles as in the 4-bit types, the fifth bits into qh.
void pack5(const int* q, uint8_t* qs, uint8_t* qh) {
  uint32_t high = 0;
  for (int j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | (q[j + kHalf] & 0x0f) << 4);
    high |= static_cast<uint32_t>(q[j] >> 4) << j;
    high |= static_cast<uint32_t>(q[j + kHalf] >> 4) << (j + kHalf);
  }
  store_qh(qh, high);
}

// Level of element j of a 5-bit block.
int level5(const uint8_t* qs, uint32_t qh, int j) {
  const int low = j < kHalf ? qs[j] & 0x0f : qs[j - kHalf] >> 4;
  return low | static_cast<int>((qh >> j) & 1u) << 4;
}

}  // namespace

// ---- Q4_0 -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ4_0& b) {
  const float d = signed_absmax(x) / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  for (int j = 0; j < kHalf; ++j) {
    const int q0 = trunc_to_level(x[j] * id + 8.5f, 15);
    const int q1 = trunc_to_level(x[j + kHalf] * id + 8.5f, 15);
    b.qs[j] = static_cast<uint8_t>(q0 | q1 << 4);
  }
}

void decode_block(const BlockQ4_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kHalf; ++j) {
    y[j] = static_cast<float>((b.qs[j] & 0x0f) - 8) * d;
    y[j + kHalf] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
  }
}

// ---- Q4_1 -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ4_1& b) {
  const Range r = range_of(x);
  const float d = (r.max - r.min) / 15;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  b.m = f32_to_f16(r.min);
  for (int j = 0; j < kHalf; ++j) {
    const int q0 = trunc_to_level((x[j] - r.min) * id + 0.5f, 15);
    const int q1 = trunc_to_level((x[j + kHalf] - r.min) * id + 0.5f, 15);
    b.qs[j] = static_cast<uint8_t>(q0 | q1 << 4);
  }
}

void decode_block(const BlockQ4_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  for (int j = 0; j < kHalf; ++j) {
    y[j] = static_cast<float>(b.qs[j] & 0x0f) * d + m;
    y[j + kHalf] = static_cast<float>(b.qs[j] >> 4) * d + m;
  }
}

// ---- Q5_0 -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ5_0& b) {
  const float d = signed_absmax(x) / -16;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  int q[kLegacyBlock];
  for (int j = 0; j < kLegacyBlock; ++j) q[j] = trunc_to_level(x[j] * id + 16.5f, 31);
  pack5(q, b.qs, b.qh);
}

void decode_block(const BlockQ5_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < kLegacyBlock; ++j) y[j] = static_cast<float>(level5(b.qs, qh, j) - 16) * d;
}

// ---- Q5_1 -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ5_1& b) {
  const Range r = range_of(x);
  const float d = (r.max - r.min) / 31;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  b.m = f32_to_f16(r.min);
  int q[kLegacyBlock];
  for (int j = 0; j < kLegacyBlock; ++j) q[j] = trunc_to_level((x[j] - r.min) * id + 0.5f, 31);
  pack5(q, b.qs, b.qh);
}

void decode_block(const BlockQ5_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  const uint32_t qh = load_qh(b.qh);
  for (int j = 0; j < kLegacyBlock; ++j) y[j] = static_cast<float>(level5(b.qs, qh, j)) * d + m;
}

// ---- Q8_0 -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ8_0& b) {
  float amax = 0.0f;
  for (int j = 0; j < kLegacyBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = f32_to_f16(d);
  for (int j = 0; j < kLegacyBlock; ++j) b.qs[j] = round_to_q8(x[j] * id);
}

void decode_block(const BlockQ8_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kLegacyBlock; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
}

}  // namespace nanoserve::tensor
