// Internal to src/tensor: the per-sub-block scale searches of the K-quant quantizers.
// They reimplement the searches of ggml's reference quantizers (no importance matrix),
// float operation for float operation, so that our blocks can match llama-quantize's.
#pragma once

#include <bit>
#include <cstdint>

namespace nanoserve::tensor {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves the rounded
// integer in the low mantissa bits. ggml rounds this way; std::lround would round ties
// away from zero and give different levels.
inline int nearest_int(float v) {
  const int32_t bits = std::bit_cast<int32_t>(v + 12582912.0f);
  return (bits & 0x007fffff) - 0x00400000;
}

// Symmetric levels l in [-nmax, nmax-1] (stored as l + nmax in L), x ~ scale * l.
// Tries 19 scales around nmax/absmax and keeps the one that minimises the x^2-weighted
// squared error (the optimal scale for fixed levels is sum(w x l) / sum(w l^2)).
// Returns the scale (negative when the extreme element is positive). Used by Q6_K.
float fit_symmetric_scale(int n, int nmax, const float* x, int8_t* L);

// Symmetric levels as above, refined by coordinate descent: each level in turn moves to
// the value that best fits the current least-squares scale, for up to 5 sweeps. Used by Q3_K.
float fit_symmetric_scale_refined(int n, int nmax, const float* x, int8_t* L);

// How fit_scale_min scans candidate scales: nmax + rmin + rdelta * k for k = 0..nstep.
struct ScaleScan {
  float rmin;
  float rdelta;
  int nstep;
};

struct ScaleMin {
  float scale;
  float min;  // >= 0; the sub-block is x ~ scale * l - min
};

// Asymmetric levels l in [0, nmax]: for each candidate scale, picks the levels, then solves
// the weighted least-squares scale and offset for them, and keeps the best fit (squared error,
// or absolute error when use_mad). n <= 32. Used by Q2_K, Q4_K, Q5_K.
ScaleMin fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, ScaleScan scan, bool use_mad);

}  // namespace nanoserve::tensor
