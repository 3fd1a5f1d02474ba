// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight; LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias.
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

// The sum of squares runs in this many interleaved chains (element i into chain i % 8), added
// in chain order at the end: the lanes of one AVX-512 double vector (or of as many narrower
// ones), so that the SIMD kernel and the scalar reference add in the same order, bit for bit.
constexpr int kNormChains = 8;

// y may alias x. As ggml does: the squares in float summed in double, the scale in float, x
// scaled first and multiplied by the weight after (the two roundings the reference makes).
// Uses the SIMD kernels of the best target this CPU supports.
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);

// The same in scalar code (the reference the SIMD version is tested against, bit for bit).
void rms_norm_reference(const float* x, const float* weight, float* y, int64_t n, float eps);

// The steps both versions share, from element `from` on (the SIMD one's scalar rest):
// - adds the squares of x[from, n) into their chains, then the chains in order, and returns the
//   scale 1 / sqrt(mean + eps);
float rms_scale(double (&chains)[kNormChains], const float* x, int64_t from, int64_t n, float eps);
// - y[i] = (x[i] * scale) * weight[i] for i in [from, n).
void rms_apply(const float* x, const float* weight, float* y, int64_t from, int64_t n, float scale);

// LayerNorm (GPT-2) as ggml computes it: the mean summed in double, the deviations and their
// squares in float (squares summed in double), scaled by 1 / sqrt(variance + eps), then
// multiplied by the weight and the bias added. y may alias x. Scalar: norms are a sliver of
// a step's time.
void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n, float eps);

}  // namespace nanoserve::kernels
