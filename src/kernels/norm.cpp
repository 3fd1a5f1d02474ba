#include "kernels/norm.h"

#include <cmath>

namespace nanoserve::kernels {

void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}

}  // namespace nanoserve::kernels
