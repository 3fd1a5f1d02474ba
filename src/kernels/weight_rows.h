// Quantized weight rows as integer levels, and the float arithmetic that turns integer
// dot products into a row's dot product the way llama.cpp's vec_dot kernels do.
//
// A weight row is first decoded into one int8 level per element plus its scales. The dot
// product with a Q8 activation row then needs only the integer sums over each group of 16
// elements (G[g] = sum of w_level * a_level; every block and sub-block of every type is a
// whole number of groups), which a SIMD kernel computes. combine() applies the scales:
//   Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 (levels centred):  sum_b (dw_b * da_b) * (G[2b] + G[2b+1])
//   Q4_1, Q5_1 (levels 0..):           the same + sum_b mw_b * sa_b   (sa: Q8_1's d * sum)
//   K-quants, per super-block B:       (da_B * dw_B) * sum_g sc_g * G[g]
//                                      - (da_B * dmin_B) * sum_g mn_g * bsum_g
// where sub-block scales sc / mins mn are repeated per group of 16 (Q4_K and Q5_K have
// sub-blocks of 32), Q3_K's sc is its signed scale and its levels include the -4 offset,
// Q6_K's levels include the -32 offset, and Q3_K / Q6_K have no mins. IQ4_NL, IQ4_XS and MXFP4
// levels are their tables' values (blocks.h); IQ4_XS is a K-quant without mins whose sc is its
// 6-bit scale - 32, MXFP4's dw its halved power of two.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/types.h"

namespace nanoserve::kernels {

using gguf::TensorType;

// The types whose rows decode to levels (the block-quantized ones).
bool decodes_to_levels(TensorType type);

struct DecodedRow {
  std::vector<int8_t> q;      // n levels
  std::vector<float> d;       // per block of 32 (legacy types) or super-block of 256 (K)
  std::vector<float> dmin;    // legacy: the block's min m; K: the super-block's dmin
  std::vector<int16_t> sc;    // K: per group of 16
  std::vector<int16_t> mn;    // K: per group of 16
  std::vector<uint8_t> raw;   // an interleaved matrix's row, back in file layout (weight_row)
  void reserve(int64_t n);    // room for rows of up to n elements
};

// One activation row in Q8 form (see activations.h): d per block (32) or super-block (256),
// s per block for Q8_1, bsums per group of 16 for Q8_K.
struct Q8Row {
  const int8_t* q;
  const float* d;
  const float* s;
  const int16_t* bsums;
  const uint8_t* u = nullptr;  // Q8_0/Q8_1: q + 128 per element
};

// Q4_K / Q5_K: sub-block j's 6-bit scale and min, packed in 12 bytes (see tensor/k_quants.cpp).
inline void scale_min_k4(const uint8_t* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4;
    m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// Scalar reference decode of one row of n elements (reserve(n) first).
void decode_row(TensorType type, const uint8_t* row, int64_t n, DecodedRow& out);

// The dot product of a decoded weight row and an activation row, from the group sums.
float combine(TensorType type, const DecodedRow& w, const int32_t* groups, const Q8Row& a, int64_t n);

}  // namespace nanoserve::kernels
