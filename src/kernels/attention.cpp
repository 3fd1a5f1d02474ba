#include "kernels/attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/activations.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {

namespace {

// A query head against a block's keys, one position at a time: the dot product in float from
// an F16 cache; from a Q8_0 cache, of the quantized query (see attention_heads).
class KeyDots {
 public:
  KeyDots(const float* q, const KvView& kv, int head_dim) : q_(q), kv_(kv), head_dim_(head_dim) {
    if (kv.type == KvType::Q8_0) quantized_.quantize(q, head_dim);
  }

  float operator()(const uint8_t* k_tile, int64_t slot) const {
    if (kv_.type == KvType::Q8_0) return kv_q8_key_dot(quantized_, k_tile, kv_.block_size, slot, head_dim_);
    float dot = 0.0f;
    for (int i = 0; i < head_dim_; ++i) dot += q_[i] * kv_key_at(kv_, k_tile, slot, i, head_dim_);
    return dot;
  }

 private:
  const float* q_;
  const KvView& kv_;
  int head_dim_;
  KvQ8Query quantized_;
};

void attention_head_reference(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                              float* scores, float* out, int64_t window) {
  const int64_t start = window_start(n_kv, window);
  const KvView head = kv_head_view(kv, kv_head);
  const KeyDots dot_with(q, kv, head_dim);
  float max = -INFINITY;
  for_each_kv_run(head, start, n_kv, [&](const KvRun& run) {
    for (int64_t p = 0; p < run.count; ++p) {
      scores[run.first + p] = run.first + p < start ? -INFINITY : dot_with(run.k, p) * scale;
      max = std::max(max, scores[run.first + p]);
    }
  });
  std::fill(out, out + head_dim, 0.0f);
  double sum = 0.0;
  for_each_kv_run(head, start, n_kv, [&](const KvRun& run) {
    for (int64_t p = 0; p < run.count; ++p) {
      const float weight = std::exp(scores[run.first + p] - max);  // 0 before the window
      sum += weight;
      if (kv.type == KvType::F16) {
        for (int i = 0; i < head_dim; ++i) out[i] += weight * kv_value_at(kv, run.v, p, i, head_dim);
        continue;
      }
      // Q8_0: the weight times each block's scale, then times the levels (see attention_heads).
      const auto* levels = reinterpret_cast<const int8_t*>(run.v) + p * head_dim;
      const uint16_t* scales = kv_q8_scales(run.v, head_dim, kv.block_size) + p;
      for (int i = 0; i < head_dim; ++i)
        out[i] += weight * tensor::f16_to_f32(scales[i / kKvQ8Block * kv.block_size]) * static_cast<float>(levels[i]);
    }
  });
  const float inv = static_cast<float>(1.0 / sum);
  for (int i = 0; i < head_dim; ++i) out[i] *= inv;
}

}  // namespace

void KvQ8Query::quantize(const float* q, int head_dim) {
  float sums[kKvQ8MaxHeadDim / kKvQ8Block];
  uint8_t unsigned_levels[kKvQ8MaxHeadDim];
  quantize_q8_block32_simd(q, head_dim, levels, scales, sums, unsigned_levels, minus_128_sums);
}

float kv_q8_key_dot(const KvQ8Query& q, const uint8_t* tile, int64_t block_size, int64_t slot, int head_dim) {
  const uint16_t* key_scales = kv_q8_scales(tile, head_dim, block_size);
  float dot = 0.0f;
  for (int g = 0; g < head_dim / kKvQ8Block; ++g) {
    int32_t levels = 0;
    for (int64_t d = g * kKvQ8Block; d < (g + 1) * kKvQ8Block; ++d)
      levels += q.levels[d] * (tile[kv_q8_key_byte(d, slot, block_size)] - 128);
    dot = std::fma(static_cast<float>(levels), tensor::f16_to_f32(key_scales[g * block_size + slot]) * q.scales[g], dot);
  }
  return dot;
}

float kv_key_at(const KvView& kv, const uint8_t* tile, int64_t slot, int d, int head_dim) {
  if (kv.type == KvType::F16) return tensor::f16_to_f32(reinterpret_cast<const uint16_t*>(tile)[d * kv.block_size + slot]);
  const uint16_t scale = kv_q8_scales(tile, head_dim, kv.block_size)[d / kKvQ8Block * kv.block_size + slot];
  return static_cast<float>(tile[kv_q8_key_byte(d, slot, kv.block_size)] - 128) * tensor::f16_to_f32(scale);
}

float kv_value_at(const KvView& kv, const uint8_t* tile, int64_t slot, int i, int head_dim) {
  const int64_t at = slot * head_dim + i;
  if (kv.type == KvType::F16) return tensor::f16_to_f32(reinterpret_cast<const uint16_t*>(tile)[at]);
  const uint16_t scale = kv_q8_scales(tile, head_dim, kv.block_size)[i / kKvQ8Block * kv.block_size + slot];
  return static_cast<float>(reinterpret_cast<const int8_t*>(tile)[at]) * tensor::f16_to_f32(scale);
}

void attention_heads_reference(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head,
                               int head_dim, int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
  for (int h = 0; h < n_rows * heads_per_row; ++h)
    attention_head_reference(q + h * head_dim, kv, kv_head, head_dim, n_kv + h / heads_per_row, scale, scores,
                             out + h * head_dim, window);
}

}  // namespace nanoserve::kernels
