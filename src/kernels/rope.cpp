#include "kernels/rope.h"

#include <cmath>

namespace nanoserve::kernels {

void rope_angles(int64_t pos, int n_rot, float base, const float* freq_factors, float* cos_out, float* sin_out,
                 float freq_scale) {
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(n_rot));
  float theta = static_cast<float>(pos);
  for (int i = 0; i < n_rot / 2; ++i) {
    const float angle = freq_scale * (freq_factors ? theta / freq_factors[i] : theta);
    cos_out[i] = std::cos(angle);
    sin_out[i] = std::sin(angle);
    theta *= theta_scale;
  }
}

void rope_apply(float* x, int n_heads, int head_dim, int n_rot, RopeStyle style, const float* cos, const float* sin) {
  const int half = n_rot / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* head = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      float* a = style == RopeStyle::Adjacent ? head + 2 * i : head + i;
      float* b = style == RopeStyle::Adjacent ? head + 2 * i + 1 : head + i + half;
      const float x0 = *a, x1 = *b;
      *a = x0 * cos[i] - x1 * sin[i];
      *b = x0 * sin[i] + x1 * cos[i];
    }
  }
}

}  // namespace nanoserve::kernels
