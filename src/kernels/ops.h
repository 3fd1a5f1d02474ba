// Element-wise kernels of the forward pass and sampling.
#pragma once

#include <cmath>
#include <cstdint>

namespace nanoserve::kernels {

// x[i] += y[i]
void add(float* x, const float* y, int64_t n);
// x[i] *= s
void scale(float* x, float s, int64_t n);
// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)). out may alias gate or up.
// Uses the SIMD kernels of the best target this CPU supports (Highway's vector Exp).
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// The same in scalar code with std::exp (the reference the SIMD version is tested against).
void silu_mul_reference(const float* gate, const float* up, float* out, int64_t n);
// gpt-oss's clamped SwiGLU: g = min(gate, limit), u = clamp(up, -limit, limit),
// out = g * sigmoid(alpha * g) * (u + 1). out may alias gate or up. SIMD as silu_mul.
void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit);
// The same in scalar code with std::exp (the reference).
void swiglu_clamped_reference(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit);
// 1 / (1 + exp(-x)): the gates of the Qwen3.5 family (attention output, shared expert, β).
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// x = softmax(x) in place (max subtracted first); returns the max.
float softmax(float* x, int64_t n);

}  // namespace nanoserve::kernels
