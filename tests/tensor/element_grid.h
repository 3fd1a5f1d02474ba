// Test helper: what one element of a quantized block is allowed to decode to, read from the
// block's raw bytes by byte offset (independently of src/tensor's structs and decoders), and
// the error bound that follows from it.
//
// Every quantized type decodes element e to  lo + k * step  for some level k, where step and
// lo come from the block's own (fp16) scale and offset. So a correct quantizer + dequantizer
// pair gives, for an input x:
//   |decoded - x| <= dist(x, [lo, hi]) + step / 2 + level_slack + float rounding
// * step / 2: x is rounded to the nearest level;
// * dist(x, [lo, hi]): x outside the representable range is clipped to its end. Q4_0/Q5_0 map
//   the extreme value of one sign to the lowest level, so the opposite extreme can be clipped by
//   up to one step; the K-quants clip where their least-squares scale search shrank the range;
// * level_slack: the legacy quantizers pick levels with the unrounded scale (and min) but store
//   fp16 copies, so a level can be off by |level| * (fp16 rounding of d) + (fp16 rounding of m).
//   The K-quants requantize against the decoded scales, so they have no such slack.
// A decoder that reads the wrong bits picks some other level, an error of several steps.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/types.h"

namespace nanoserve::test {

struct ElementGrid {
  double lo = 0;           // lowest decodable value of this element's (sub-)block
  double hi = 0;           // highest
  double step = 0;         // spacing of the levels (>= 0)
  double level_slack = 0;  // see above
};

// `block` points at the block holding element e (0 <= e < block size) of a quantized type.
ElementGrid element_grid(gguf::TensorType type, const uint8_t* block, int e);

// The bound above for input x, with a relative allowance of a few float ulps for rounding in
// the quantizer's and decoder's float arithmetic.
double allowed_error(const ElementGrid& g, double x);

// Rounding error of storing v as an fp16: half an ulp (relative 2^-11), at least half the
// smallest subnormal (2^-25).
double fp16_rounding(double v);

// Bound for one element of a plain float type: 0 for F32, half an ulp for F16 and BF16
// (8 significant bits: relative 2^-8; float subnormals are kept, so no floor is needed
// beyond the smallest one).
double float_type_error(gguf::TensorType type, double x);

// Quality bound: largest RMS error / RMS input for Gaussian (or uniform) data, with no
// degenerate blocks. Rounding to levels D apart gives RMS error D / sqrt(12) = 0.29 D, and D
// follows from the block: about absmax / (levels per side) for the symmetric types, range /
// (levels - 1) for the ones with an offset. For sigma = 1, the absmax of 16 / 32 / 256
// Gaussian values is about 1.8 / 2.1 / 2.9 and the range about 3.6 / 4.2 / 5.8, so:
//   F16   0.29 * 2^-11..2^-10 relative   = 0.014-0.028%   BF16  0.11-0.23%
//   Q8_0  2.1/127 * 0.29 = 0.48%         Q8_K  2.9/127 * 0.29 = 0.66%
//   Q6_K  1.8/32  * 0.29 = 1.6%          Q5_0  2.1/16  * 0.29 = 3.8%
//   Q5_1, Q5_K  4.2/31 * 0.29 = 3.9%     Q4_0  2.1/8   * 0.29 = 7.6% (+ the clipped extreme)
//   Q4_1, Q4_K  4.2/15 * 0.29 = 8.1%     Q3_K  1.8/4   * 0.29 = 13%
//   Q2_K  3.6/3 * 0.29 = 35% (the least-squares fit clips the tails and does a bit better)
// The limits sit 25-50% above these estimates and above what we measure (e.g. Q4_K 7.0%,
// Q2_K 30%), so a broken scale search fails while an honest one passes. They do not apply to
// inputs below ~1e-4: the fp16 super-block scales underflow there (as in ggml).
double max_rel_rms(gguf::TensorType type);

// Accumulates checks of decoded values against the values they were quantized from.
struct RowReport {
  int64_t checked = 0;
  int64_t violations = 0;
  double worst = 0;  // max of |error| / allowed over the elements (1 is the bound)
  std::string first_violation;
  double sum_sq_err = 0;
  double sum_sq_ref = 0;
  double rel_rms() const;  // RMS error / RMS reference
};

// Checks row `decoded` (n elements) against `reference`, with the per-element bound of the
// type (element_grid for quantized types, read from `bytes`, the row's stored blocks).
// When the reference is itself an fp16 copy of the true input (ref_is_fp16), the bound grows
// by twice that rounding: once for the input, once for where it sits against the grid.
void check_row(gguf::TensorType type, const float* reference, const uint8_t* bytes, const float* decoded, int64_t n,
               bool ref_is_fp16, RowReport& report);

}  // namespace nanoserve::test
