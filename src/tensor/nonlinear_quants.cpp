// IQ4_NL, IQ4_XS and MXFP4: 4-bit indices into a fixed table of levels (blocks.h).
//
// The encoders reproduce what llama-quantize writes (ggml_quantize_chunk, with or without an
// imatrix) bit for bit, so the choices are ggml's:
//  * IQ4_NL and IQ4_XS share one search (ggml's quantize_row_iq4_nl_impl with ntry = 7, not
//    the ntry = -1 of quantize_row_iq4_nl_ref): a first scale maps the signed extreme to -127,
//    then 15 scales around it are tried and the least-squares one with the best weighted fit
//    is kept; the indices stay those of the first scale, except that IQ4_NL picks them again
//    for the final scale and IQ4_XS for its 6-bit rounded sub-block scale.
//  * weights are x^2 without importance, importance * sqrt(sigma2 + x^2) with it (sigma2 twice
//    the mean square of the block or super-block).
//  * MXFP4 takes the exponent of the block's absmax minus 2 (so absmax lands at level 4..8 of
//    the doubled E2M1 table) and the nearest level per element, the first on ties.
// Keep the float operations in this order: a reordering changes rounding and the bytes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/codecs.h"
#include "tensor/fp16.h"
#include "tensor/k_quant_search.h"

namespace nanoserve::tensor {
namespace {

constexpr int kSub = 32;             // elements per scale of the IQ4 search
constexpr float kGroupMaxEps = 1e-15f;  // below this absmax a sub-block is all zero

// Index of the level nearest to x in the sorted table (ggml's best_index_int8): the lower
// one on ties.
int nearest_level(const int8_t* values, float x) {
  if (x <= values[0]) return 0;
  if (x >= values[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < values[mid]) hi = mid;
    else lo = mid;
  }
  return x - values[hi - 1] < values[hi] - x ? hi - 1 : hi;
}

// The scale of one sub-block of 32 (0 when it is all but zero); L gets the first scale's
// indices. w are the error weights.
float fit_iq4_scale(const float* x, const float* w, uint8_t* L) {
  constexpr int kTries = 7;
  const int8_t* values = kIQ4Levels;
  float amax = 0, max = 0;
  for (int j = 0; j < kSub; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax < kGroupMaxEps) return 0;
  float d = -max / values[0];
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < kSub; ++j) {
    const int l = nearest_level(values, id * x[j]);
    L[j] = static_cast<uint8_t>(l);
    const float q = values[l];
    sumqx += w[j] * q * x[j];
    sumq2 += w[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int t = -kTries; t <= kTries; ++t) {
    id = static_cast<float>(t + values[0]) / max;
    sumqx = sumq2 = 0;
    for (int j = 0; j < kSub; ++j) {
      const float q = values[nearest_level(values, id * x[j])];
      sumqx += w[j] * q * x[j];
      sumq2 += w[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// The error weights of sub-block x (n_all: the elements sigma2 was taken over).
void iq4_weights(const float* x, const float* importance, float sigma2, float* w) {
  for (int j = 0; j < kSub; ++j) w[j] = importance ? importance[j] * std::sqrt(sigma2 + x[j] * x[j]) : x[j] * x[j];
}

float iq4_sigma2(const float* x, int n) {
  float sigma2 = 0;
  for (int j = 0; j < n; ++j) sigma2 += x[j] * x[j];
  return sigma2 * (2.f / static_cast<float>(n));
}

// 32 indices as 16 bytes: element j in the low nibble of byte j, element j + 16 in the high one.
void pack_nibbles(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kSub / 2; ++j) qs[j] = static_cast<uint8_t>(L[j] | L[j + kSub / 2] << 4);
}

int nibble(const uint8_t* qs, int j) { return j < kSub / 2 ? qs[j] & 0x0f : qs[j - kSub / 2] >> 4; }

}  // namespace

// ---- IQ4_NL ---------------------------------------------------------------------------

void encode_block(const float* x, BlockIQ4_NL& b, const float* importance) {
  float w[kSub];
  uint8_t L[kSub];
  iq4_weights(x, importance, iq4_sigma2(x, kSub), w);
  const float d = fit_iq4_scale(x, w, L);
  b.d = f32_to_f16(d);
  const float id = d != 0.0f ? 1 / d : 0;
  for (int j = 0; j < kSub; ++j) L[j] = static_cast<uint8_t>(nearest_level(kIQ4Levels, id * x[j]));
  pack_nibbles(L, b.qs);
}

void decode_block(const BlockIQ4_NL& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kSub; ++j) y[j] = d * kIQ4Levels[nibble(b.qs, j)];
}

// ---- IQ4_XS ---------------------------------------------------------------------------

void encode_block(const float* x, BlockIQ4_XS& b, const float* importance) {
  constexpr int kSubs = kSuperBlock / kSub;
  const float sigma2 = iq4_sigma2(x, kSuperBlock);
  float scales[kSubs];
  float max_scale = 0, amax_scale = 0;
  for (int s = 0; s < kSubs; ++s) {
    float w[kSub];
    uint8_t unused[kSub];
    iq4_weights(x + s * kSub, importance ? importance + s * kSub : nullptr, sigma2, w);
    scales[s] = fit_iq4_scale(x + s * kSub, w, unused);
    if (std::fabs(scales[s]) > amax_scale) {
      amax_scale = std::fabs(scales[s]);
      max_scale = scales[s];
    }
  }
  // The super-block scale maps the sub-block scale of largest magnitude to -32.
  const float d = -max_scale / 32;
  b.d = f32_to_f16(d);
  const float id = d != 0.0f ? 1 / d : 0;
  b.scales_h = 0;
  std::memset(b.scales_l, 0, sizeof b.scales_l);
  for (int s = 0; s < kSubs; ++s) {
    const int l = std::max(-32, std::min(31, nearest_int(id * scales[s])));
    const float dl = d * static_cast<float>(l);
    const float idl = dl != 0.0f ? 1 / dl : 0;
    uint8_t L[kSub];
    for (int j = 0; j < kSub; ++j) L[j] = static_cast<uint8_t>(nearest_level(kIQ4Levels, idl * x[s * kSub + j]));
    pack_nibbles(L, b.qs + s * kSub / 2);
    const int u = l + 32;
    b.scales_l[s / 2] = static_cast<uint8_t>(b.scales_l[s / 2] | (u & 0x0f) << (4 * (s % 2)));
    b.scales_h = static_cast<uint16_t>(b.scales_h | (u >> 4) << (2 * s));
  }
}

int iq4_xs_scale(const BlockIQ4_XS& b, int j) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | ((b.scales_h >> (2 * j)) & 3) << 4;
}

void decode_block(const BlockIQ4_XS& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int s = 0; s < kSuperBlock / kSub; ++s) {
    const float dl = d * static_cast<float>(iq4_xs_scale(b, s) - 32);
    for (int j = 0; j < kSub; ++j) y[s * kSub + j] = dl * kIQ4Levels[nibble(b.qs + s * kSub / 2, j)];
  }
}

// ---- MXFP4 ----------------------------------------------------------------------------

namespace {

// The E8M0 exponent of a block whose absmax is amax: floor(log2(amax)) - 2 + 127, wrapped to
// a byte as ggml's (uint8_t) cast does on x86 (only an absmax below 2^-125 wraps). Non-finite
// input gives 0xff instead of undefined behaviour.
uint8_t mxfp4_exponent(float amax) {
  if (!(amax > 0.0f)) return 0;
  const float e = std::floor(std::log2(amax)) - 2 + 127;
  if (!std::isfinite(e)) return 0xff;
  return static_cast<uint8_t>(static_cast<int>(e));
}

int nearest_fp4(float x, float d) {
  int best = 0;
  float best_err = std::fabs(kMXFP4Levels[0] * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(kMXFP4Levels[i] * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void encode_block(const float* x, BlockMXFP4& b) {
  float amax = 0.0f;
  for (int j = 0; j < kSub; ++j)
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
  b.e = mxfp4_exponent(amax);
  const float d = mxfp4_scale(b.e);
  uint8_t L[kSub];
  for (int j = 0; j < kSub; ++j) L[j] = static_cast<uint8_t>(nearest_fp4(x[j], d));
  pack_nibbles(L, b.qs);
}

void decode_block(const BlockMXFP4& b, float* y) {
  const float d = mxfp4_scale(b.e);
  for (int j = 0; j < kSub; ++j) y[j] = kMXFP4Levels[nibble(b.qs, j)] * d;
}

}  // namespace nanoserve::tensor
