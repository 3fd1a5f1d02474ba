// GELU (tanh form), computed as llama.cpp's CPU backend computes it, so that GPT-2's and
// Gemma's logits match its references: the input rounded to F16 indexes a table of the
// F16-rounded GELU of every F16 value; inputs at or beyond ±10 take the limits (x, or 0).
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

// out[i] = gelu(x[i]); out may alias x.
void gelu(const float* x, float* out, int64_t n);
// out[i] = gelu(gate[i]) * up[i] (GeGLU, Gemma's feed-forward); out may alias gate or up.
void gelu_mul(const float* gate, const float* up, float* out, int64_t n);

// gelu(x) = 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) in float, unrounded (the table's entries
// are this at F16 inputs, rounded to F16).
float gelu_exact(float x);

}  // namespace nanoserve::kernels
