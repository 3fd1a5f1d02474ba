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

}  // namespace nanoserve::kernels
