#include "kernels/rope.h"

#include <algorithm>
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

Yarn yarn_for(int n_rot, float base, float factor, uint32_t original_context, float beta_fast, float beta_slow) {
  // The pair that turns `turns` times over the original context.
  auto dim_of = [&](float turns) {
    return static_cast<float>(n_rot) *
           std::log(static_cast<float>(original_context) / (turns * 2.0f * static_cast<float>(M_PI))) /
           (2.0f * std::log(base));
  };
  Yarn y;
  y.freq_scale = 1.0f / factor;
  y.low = std::max(0.0f, std::floor(dim_of(beta_fast)));
  y.high = std::min(static_cast<float>(n_rot - 1), std::ceil(dim_of(beta_slow)));
  // llama.cpp's attention factor (0.1 ln factor + 1, cancelled once by its context setup and
  // applied again by ggml's rope): the product is kept in that order.
  const float m = factor <= 1.0f ? 1.0f : 0.1f * std::log(factor) + 1.0f;
  const float attn_factor = m * (1.0f / (1.0f + 0.1f * std::log(factor)));
  y.mscale = attn_factor * (1.0f + 0.1f * std::log(1.0f / y.freq_scale));
  return y;
}

void rope_angles_yarn(int64_t pos, int n_rot, float base, const Yarn& yarn, float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(n_rot));
  float theta = static_cast<float>(pos);
  for (int i = 0; i < n_rot / 2; ++i) {
    const float ramp_at = (static_cast<float>(i) - yarn.low) / std::max(0.001f, yarn.high - yarn.low);
    const float mix = 1.0f - std::min(1.0f, std::max(0.0f, ramp_at));
    const float scaled = yarn.freq_scale * theta;
    const float angle = scaled * (1.0f - mix) + theta * mix;
    cos_out[i] = std::cos(angle) * yarn.mscale;
    sin_out[i] = std::sin(angle) * yarn.mscale;
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
