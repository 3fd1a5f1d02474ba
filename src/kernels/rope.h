// Rotary position embedding. Dimension pair i of a head (i < n_rot / 2) is rotated by the
// angle pos * base^(-2i / n_rot) / freq_factor[i]; dimensions from n_rot on are left alone.
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

enum class RopeStyle {
  Adjacent,  // pairs (2i, 2i+1): llama.cpp's NORM rope (llama)
  Halves,    // pairs (i, i + n_rot/2): NEOX rope (qwen2, qwen3)
};

// cos and sin of the n_rot / 2 angles of one position. freq_factors (Llama 3 scaling's
// rope_freqs) may be null. The angle is built as ggml builds it: theta starts at pos and is
// multiplied by base^(-2/n_rot) once per pair, in float; the reference logits depend on
// those roundings at long positions.
// freq_scale: linear scaling's 1 / factor, which multiplies every angle (ggml's freq_scale).
void rope_angles(int64_t pos, int n_rot, float base, const float* freq_factors, float* cos_out, float* sin_out,
                 float freq_scale = 1.0f);

// YaRN scaling (rope.scaling.type "yarn"; gpt-oss), as ggml's rope computes it: pair i's angle is
// the scaled one (freq_scale * theta) blended toward the unscaled theta by ramp(i) = 1 -
// clamp((i - low) / max(0.001, high - low), 0, 1), so that the fast-turning pairs (below `low`)
// keep their angles and the slow ones (past `high`) are interpolated; cos and sin are then
// multiplied by mscale.
struct Yarn {
  float freq_scale = 1.0f;  // 1 / rope.scaling.factor
  float low = 0.0f, high = 0.0f;
  float mscale = 1.0f;
};

// ggml_rope_yarn_corr_dims and llama.cpp's attention factor for a model trained at
// original_context and extended by `factor`, with the ramp's ends at beta_fast and beta_slow
// turns over the original context.
Yarn yarn_for(int n_rot, float base, float factor, uint32_t original_context, float beta_fast, float beta_slow);

// rope_angles with YaRN scaling (no frequency factors).
void rope_angles_yarn(int64_t pos, int n_rot, float base, const Yarn& yarn, float* cos_out, float* sin_out);

// Rotates n_heads heads of head_dim floats (head h at x + h * head_dim) in place.
void rope_apply(float* x, int n_heads, int head_dim, int n_rot, RopeStyle style, const float* cos, const float* sin);

}  // namespace nanoserve::kernels
