#include "kernels/norm.h"

#include <cmath>

namespace nanoserve::kernels {

float rms_scale(double (&chains)[kNormChains], const float* x, int64_t from, int64_t n, float eps) {
  for (int64_t i = from; i < n; ++i) chains[i % kNormChains] += static_cast<double>(x[i] * x[i]);
  double sum = chains[0];
  for (int c = 1; c < kNormChains; ++c) sum += chains[c];
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  return 1.0f / std::sqrt(mean + eps);
}

void rms_apply(const float* x, const float* weight, float* y, int64_t from, int64_t n, float scale) {
  for (int64_t i = from; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}

void rms_norm_reference(const float* x, const float* weight, float* y, int64_t n, float eps) {
  double chains[kNormChains] = {};
  rms_apply(x, weight, y, 0, n, rms_scale(chains, x, 0, n, eps));
}

void layer_norm(const float* x, const float* weight, const float* bias, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  double squares = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] - mean;
    y[i] = v;
    squares += static_cast<double>(v * v);
  }
  const auto variance = static_cast<float>(squares / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(variance + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] * scale * weight[i] + bias[i];
}

}  // namespace nanoserve::kernels
