// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight.
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

// y may alias x. As ggml does: the sum of squares in double, the scale in float, x scaled
// first and multiplied by the weight after (the two roundings the reference makes).
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);

}  // namespace nanoserve::kernels
