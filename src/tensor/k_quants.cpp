// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (weights) and Q8_K (activations): 256-element super-blocks.
//
// Each quantizer follows ggml's reference (no importance matrix):
//  1. fit a scale (and min) per sub-block with the searches of k_quant_search.cpp;
//  2. quantize those sub-block scales against one fp16 super-block scale;
//  3. requantize every element against the scale it will actually be decoded with
//     (fp16 super-scale * quantized sub-scale), so each element lands on the grid point
//     nearest to it, or on the grid's end when it lies outside.
// Sub-blocks whose decoded scale is 0 keep the levels of step 1 (they decode to the offset).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "tensor/codecs.h"
#include "tensor/fp16.h"
#include "tensor/k_quant_search.h"

namespace nanoserve::tensor {
namespace {

constexpr int kQK = kSuperBlock;

// ---- bit layouts ----------------------------------------------------------------------

// 2-bit levels (Q2_K, Q3_K): in each 128-element chunk, byte l holds elements
// l, l+32, l+64, l+96 at bits 0, 2, 4, 6.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int c = 0; c < kQK / 128; ++c) {
    const uint8_t* in = L + 128 * c;
    for (int l = 0; l < 32; ++l)
      qs[32 * c + l] = static_cast<uint8_t>(in[l] | in[l + 32] << 2 | in[l + 64] << 4 | in[l + 96] << 6);
  }
}

// 4-bit levels (Q4_K, Q5_K): in each 64-element chunk, byte l holds element l in its low
// nibble and element l+32 in its high nibble. Levels above 15 must be split off first.
void pack_4bit(const uint8_t* L, uint8_t* qs) {
  for (int c = 0; c < kQK / 64; ++c)
    for (int l = 0; l < 32; ++l) qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | L[64 * c + l + 32] << 4);
}

// Q3_K: sixteen 6-bit scales (stored +32) in 12 bytes. Low 4 bits: nibbles of bytes 0..7
// (sub-blocks 0..7 low nibble, 8..15 high nibble); top 2 bits: byte 8 + j%4, bits 2*(j/4).
int scale_q3k(const uint8_t* s, int j) {
  const int low = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}

void set_scale_q3k(uint8_t* s, int j, int stored) {  // stored in 0..63; s starts zeroed
  if (j < 8)
    s[j] |= static_cast<uint8_t>(stored & 0x0f);
  else
    s[j - 8] |= static_cast<uint8_t>((stored & 0x0f) << 4);
  s[8 + j % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (j / 4)));
}

// ---- shared steps of the asymmetric types (Q2_K, Q4_K, Q5_K) --------------------------

float max_of(const float* v, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m = std::max(m, v[i]);
  return m;
}

// Q4_K / Q5_K step 1 for one 32-element sub-block. The weights favour large elements
// (|x|) on top of the sub-block's RMS, so that outliers are not sacrificed.
ScaleMin fit_sub_block32(const float* x, int nmax, uint8_t* L, ScaleScan scan) {
  float sum_x2 = 0.0f;
  for (int l = 0; l < 32; ++l) sum_x2 += x[l] * x[l];
  const float av_x = std::sqrt(sum_x2 / 32);
  float w[32];
  for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(x[l]);
  return fit_scale_min(32, nmax, x, w, L, scan, false);
}

// Q4_K / Q5_K steps 1-3: returns the levels (0..nmax) in L, fills d, dmin and scales.
void quantize_k4_layout(const float* x, int nmax, ScaleScan scan, uint16_t& d, uint16_t& dmin, uint8_t* scales,
                        uint8_t* L) {
  float sc[8];
  float mn[8];
  for (int j = 0; j < 8; ++j) {
    const ScaleMin r = fit_sub_block32(x + 32 * j, nmax, L + 32 * j, scan);
    sc[j] = r.scale;
    mn[j] = r.min;
  }
  const float max_scale = max_of(sc, 8);
  const float max_min = max_of(mn, 8);
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  for (int j = 0; j < 8; ++j) {
    // ggml stores nearest_int into a uint8_t before clamping; keep that wrap-around.
    const int ls = std::min(63, static_cast<int>(static_cast<uint8_t>(nearest_int(inv_scale * sc[j]))));
    const int lm = std::min(63, static_cast<int>(static_cast<uint8_t>(nearest_int(inv_min * mn[j]))));
    set_scale_min_k4(scales, j, ls, lm);
  }
  d = f32_to_f16(max_scale / 63.0f);
  dmin = f32_to_f16(max_min / 63.0f);

  const float dd = f16_to_f32(d);
  const float dm = f16_to_f32(dmin);
  for (int j = 0; j < 8; ++j) {
    const auto [s, m] = scale_min_k4(scales, j);
    const float step = dd * static_cast<float>(s);
    if (step == 0.0f) continue;
    const float offset = dm * static_cast<float>(m);
    for (int i = 0; i < 32; ++i) {
      const int l = nearest_int((x[32 * j + i] + offset) / step);
      L[32 * j + i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    }
  }
}

}  // namespace

// Q4_K / Q5_K: eight 6-bit scales and eight 6-bit mins in 12 bytes. Sub-blocks 0..3 use the
// low 6 bits of bytes 0..3 (scale) and 4..7 (min); sub-blocks 4..7 keep their low 4 bits in
// the nibbles of bytes 8..11 and their top 2 bits in the spare top bits of bytes 0..7.
std::pair<int, int> scale_min_k4(const uint8_t* s, int j) {
  if (j < 4) return {s[j] & 63, s[j + 4] & 63};
  return {(s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4, (s[j + 4] >> 4) | (s[j] >> 6) << 4};
}

void set_scale_min_k4(uint8_t* s, int j, int sc, int m) {
  if (j < 4) {
    s[j] = static_cast<uint8_t>(sc);
    s[j + 4] = static_cast<uint8_t>(m);
  } else {  // ORs into bytes 0..7, so sub-blocks 0..3 must be written first
    s[j + 4] = static_cast<uint8_t>((sc & 0x0f) | (m & 0x0f) << 4);
    s[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
    s[j] |= static_cast<uint8_t>((m >> 4) << 6);
  }
}


// ---- Q2_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ2_K& b) {
  uint8_t L[kQK];
  float sc[16];
  float mn[16];
  for (int j = 0; j < 16; ++j) {
    float w[16];
    for (int l = 0; l < 16; ++l) w[l] = std::fabs(x[16 * j + l]);
    const ScaleMin r = fit_scale_min(16, 3, x + 16 * j, w, L + 16 * j, {-0.5f, 0.1f, 15}, true);
    sc[j] = r.scale;
    mn[j] = r.min;
  }
  // Sub-block scales and mins are 4-bit multiples of d and dmin.
  const float max_scale = max_of(sc, 16);
  const float max_min = max_of(mn, 16);
  std::memset(b.scales, 0, sizeof b.scales);
  b.d = 0;
  b.dmin = 0;
  if (max_scale > 0.0f) {
    const float iscale = 15.0f / max_scale;
    for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(nearest_int(iscale * sc[j]));
    b.d = f32_to_f16(max_scale / 15.0f);
  }
  if (max_min > 0.0f) {
    const float iscale = 15.0f / max_min;
    for (int j = 0; j < 16; ++j) b.scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mn[j]) << 4);
    b.dmin = f32_to_f16(max_min / 15.0f);
  }
  const float dd = f16_to_f32(b.d);
  const float dm = f16_to_f32(b.dmin);
  for (int j = 0; j < 16; ++j) {
    const float step = dd * static_cast<float>(b.scales[j] & 0x0f);
    if (step == 0.0f) continue;
    const float offset = dm * static_cast<float>(b.scales[j] >> 4);
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int((x[16 * j + i] + offset) / step);
      L[16 * j + i] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
    }
  }
  pack_2bit(L, b.qs);
}

void decode_block(const BlockQ2_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int e = 0; e < kQK; e += 16) {
    const int c = e / 128;          // 128-element chunk
    const int shift = 2 * (e % 128 / 32);
    const uint8_t* q = b.qs + 32 * c + e % 32;
    const uint8_t sc = b.scales[e / 16];
    const float step = d * static_cast<float>(sc & 0x0f);
    const float offset = dmin * static_cast<float>(sc >> 4);
    for (int l = 0; l < 16; ++l) y[e + l] = step * static_cast<float>((q[l] >> shift) & 3) - offset;
  }
}

// ---- Q3_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ3_K& b) {
  int8_t L[kQK];
  float sc[16];
  float max_scale = 0.0f;  // the scale of largest magnitude, signed
  float amax = 0.0f;
  for (int j = 0; j < 16; ++j) {
    sc[j] = fit_symmetric_scale_refined(16, 4, x + 16 * j, L + 16 * j);
    if (std::fabs(sc[j]) > amax) {
      amax = std::fabs(sc[j]);
      max_scale = sc[j];
    }
  }
  std::memset(b.scales, 0, sizeof b.scales);
  b.d = 0;
  if (max_scale != 0.0f) {
    // 6-bit signed sub-scales in -32..31: the largest one maps to -32.
    const float iscale = -32.0f / max_scale;
    for (int j = 0; j < 16; ++j) {
      const int l = static_cast<int8_t>(nearest_int(iscale * sc[j]));
      set_scale_q3k(b.scales, j, std::max(-32, std::min(31, l)) + 32);
    }
    b.d = f32_to_f16(1.0f / iscale);
  }
  const float dd = f16_to_f32(b.d);
  for (int j = 0; j < 16; ++j) {
    const float step = dd * static_cast<float>(scale_q3k(b.scales, j));
    if (step == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int(x[16 * j + i] / step);
      L[16 * j + i] = static_cast<int8_t>(std::max(-4, std::min(3, l)) + 4);
    }
  }
  // Bit 2 of element e goes to hmask[e % 32], bit e / 32; the low 2 bits to qs.
  uint8_t low[kQK];
  std::memset(b.hmask, 0, sizeof b.hmask);
  for (int e = 0; e < kQK; ++e) {
    if (L[e] > 3) b.hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
    low[e] = static_cast<uint8_t>(L[e] & 3);
  }
  pack_2bit(low, b.qs);
}

void decode_block(const BlockQ3_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int e = 0; e < kQK; e += 16) {
    const int c = e / 128;
    const int group = e % 128 / 32;  // 0..3 within the chunk
    const uint8_t* q = b.qs + 32 * c + e % 32;
    const uint8_t* h = b.hmask + e % 32;
    const uint8_t hbit = static_cast<uint8_t>(1u << (4 * c + group));
    const float step = d * static_cast<float>(scale_q3k(b.scales, e / 16));
    for (int l = 0; l < 16; ++l) {
      const int level = ((q[l] >> (2 * group)) & 3) - ((h[l] & hbit) ? 0 : 4);
      y[e + l] = step * static_cast<float>(level);
    }
  }
}

// ---- Q4_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ4_K& b) {
  uint8_t L[kQK];
  quantize_k4_layout(x, 15, {-1.0f, 0.1f, 20}, b.d, b.dmin, b.scales, L);
  pack_4bit(L, b.qs);
}

void decode_block(const BlockQ4_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int j = 0; j < 8; ++j) {  // sub-block j: nibble j % 2 of the bytes of chunk j / 2
    const auto [s, m] = scale_min_k4(b.scales, j);
    const float step = d * static_cast<float>(s);
    const float offset = dmin * static_cast<float>(m);
    const uint8_t* q = b.qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 32; ++l) y[32 * j + l] = step * static_cast<float>((q[l] >> shift) & 0x0f) - offset;
  }
}

// ---- Q5_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ5_K& b) {
  uint8_t L[kQK];
  quantize_k4_layout(x, 31, {-0.5f, 0.1f, 15}, b.d, b.dmin, b.scales, L);
  // Bit 4 of sub-block j's element l goes to qh[l], bit j; the rest is packed as Q4_K.
  std::memset(b.qh, 0, sizeof b.qh);
  for (int e = 0; e < kQK; ++e) {
    if (L[e] > 15) {
      b.qh[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
      L[e] = static_cast<uint8_t>(L[e] - 16);
    }
  }
  pack_4bit(L, b.qs);
}

void decode_block(const BlockQ5_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int j = 0; j < 8; ++j) {
    const auto [s, m] = scale_min_k4(b.scales, j);
    const float step = d * static_cast<float>(s);
    const float offset = dmin * static_cast<float>(m);
    const uint8_t* q = b.qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 32; ++l) {
      const int level = ((q[l] >> shift) & 0x0f) | ((b.qh[l] >> j) & 1) << 4;
      y[32 * j + l] = step * static_cast<float>(level) - offset;
    }
  }
}

// ---- Q6_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ6_K& b) {
  int8_t L[kQK];
  float sc[16];
  float max_scale = 0.0f;  // signed, largest magnitude
  float amax = 0.0f;
  for (int j = 0; j < 16; ++j) {
    sc[j] = fit_symmetric_scale(16, 32, x + 16 * j, L + 16 * j);
    if (std::fabs(sc[j]) > amax) {
      amax = std::fabs(sc[j]);
      max_scale = sc[j];
    }
  }
  if (amax < 1e-15f) {  // all zero (ggml's GROUP_MAX_EPS)
    std::memset(&b, 0, sizeof b);
    return;
  }
  // 8-bit signed sub-scales: the largest maps to -128.
  const float iscale = -128.0f / max_scale;
  b.d = f32_to_f16(1.0f / iscale);
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * sc[j])));
  const float dd = f16_to_f32(b.d);
  for (int j = 0; j < 16; ++j) {
    const float step = dd * static_cast<float>(b.scales[j]);
    if (step == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int(x[16 * j + i] / step);
      L[16 * j + i] = static_cast<int8_t>(std::max(-32, std::min(31, l)) + 32);
    }
  }
  // Per 128-element chunk: ql byte l holds elements l (low) and l+64 (high), byte l+32
  // holds l+32 and l+96; qh byte l holds the top 2 bits of l, l+32, l+64, l+96.
  for (int c = 0; c < kQK / 128; ++c) {
    const int8_t* in = L + 128 * c;
    uint8_t* ql = b.ql + 64 * c;
    uint8_t* qh = b.qh + 32 * c;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((in[l] & 0x0f) | (in[l + 64] & 0x0f) << 4);
      ql[l + 32] = static_cast<uint8_t>((in[l + 32] & 0x0f) | (in[l + 96] & 0x0f) << 4);
      qh[l] = static_cast<uint8_t>(in[l] >> 4 | (in[l + 32] >> 4) << 2 | (in[l + 64] >> 4) << 4 | (in[l + 96] >> 4) << 6);
    }
  }
}

void decode_block(const BlockQ6_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int e = 0; e < kQK; e += 16) {
    const int c = e / 128;
    const int group = e % 128 / 32;  // 0..3: which of l, l+32, l+64, l+96
    const int l0 = e % 32;
    const uint8_t* ql = b.ql + 64 * c + 32 * (group % 2) + l0;
    const uint8_t* qh = b.qh + 32 * c + l0;
    const int low_shift = 4 * (group / 2);
    const float step = d * static_cast<float>(b.scales[e / 16]);
    for (int l = 0; l < 16; ++l) {
      const int level = ((ql[l] >> low_shift) & 0x0f) | ((qh[l] >> (2 * group)) & 3) << 4;
      y[e + l] = step * static_cast<float>(level - 32);
    }
  }
}

// ---- Q8_K -----------------------------------------------------------------------------

void encode_block(const float* x, BlockQ8_K& b) {
  float max = 0.0f;  // signed, largest magnitude
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  if (amax == 0.0f) {
    std::memset(&b, 0, sizeof b);
    return;
  }
  // Levels -127..127: ggml scales by -127 (not -128) for its SIMD kernels; we match its bytes.
  const float iscale = -127.0f / max;
  for (int j = 0; j < kQK; ++j) b.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
  for (int j = 0; j < kQK / 16; ++j) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += b.qs[16 * j + i];
    b.bsums[j] = static_cast<int16_t>(sum);
  }
  b.d = 1.0f / iscale;
}

void decode_block(const BlockQ8_K& b, float* y) {
  for (int j = 0; j < kQK; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
}

}  // namespace nanoserve::tensor
