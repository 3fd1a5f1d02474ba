#include "kernels/ops.h"

#include <algorithm>
#include <cmath>

namespace nanoserve::kernels {

void add(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void silu_mul_reference(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void swiglu_clamped_reference(const float* gate, const float* up, float* out, int64_t n, float alpha, float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);  // the gate is clamped from above only
    const float u = std::clamp(up[i], -limit, limit);
    out[i] = g / (1.0f + std::exp(-alpha * g)) * (u + 1.0f);
  }
}

float softmax(float* x, int64_t n) {
  const float max = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  return max;
}

}  // namespace nanoserve::kernels
