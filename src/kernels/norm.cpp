#include "kernels/norm.h"

namespace nanoserve::kernels {

void rms_norm_reference(const float* x, const float* weight, float* y, int64_t n, float eps) {
  double chains[kNormChains] = {};
  for (int64_t i = 0; i < n; ++i) chains[i % kNormChains] += static_cast<double>(x[i] * x[i]);
  double sum = chains[0];
  for (int c = 1; c < kNormChains; ++c) sum += chains[c];
  const float scale = rms_scale(sum, n, eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}

}  // namespace nanoserve::kernels
