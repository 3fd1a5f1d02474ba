#include "kernels/attention.h"

#include <algorithm>
#include <cmath>

#include "tensor/fp16.h"

namespace nanoserve::kernels {

namespace {

void attention_head_reference(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                              float* scores, float* out, int64_t window) {
  const int64_t start = window_start(n_kv, window);
  const KvView head = kv_head_view(kv, kv_head);
  float max = -INFINITY;
  for_each_kv_run(head, start, n_kv, [&](const KvRun& run) {
    for (int64_t p = 0; p < run.count; ++p) {
      float dot = 0.0f;
      for (int i = 0; i < head_dim; ++i) dot += q[i] * kv_key_at(kv, run.k, p, i, head_dim);
      scores[run.first + p] = run.first + p < start ? -INFINITY : dot * scale;
      max = std::max(max, scores[run.first + p]);
    }
  });
  std::fill(out, out + head_dim, 0.0f);
  double sum = 0.0;
  for_each_kv_run(head, start, n_kv, [&](const KvRun& run) {
    for (int64_t p = 0; p < run.count; ++p) {
      const float weight = std::exp(scores[run.first + p] - max);  // 0 before the window
      sum += weight;
      for (int i = 0; i < head_dim; ++i) out[i] += weight * kv_value_at(kv, run.v, p, i, head_dim);
    }
  });
  const float inv = static_cast<float>(1.0 / sum);
  for (int i = 0; i < head_dim; ++i) out[i] *= inv;
}

}  // namespace

float kv_key_at(const KvView& kv, const uint8_t* tile, int64_t slot, int d, int head_dim) {
  const int64_t at = d * kv.block_size + slot;
  if (kv.type == KvType::F16) return tensor::f16_to_f32(reinterpret_cast<const uint16_t*>(tile)[at]);
  const uint16_t scale = kv_q8_scales(tile, head_dim, kv.block_size)[d / kKvQ8Block * kv.block_size + slot];
  return static_cast<float>(reinterpret_cast<const int8_t*>(tile)[at]) * tensor::f16_to_f32(scale);
}

float kv_value_at(const KvView& kv, const uint8_t* tile, int64_t slot, int i, int head_dim) {
  const int64_t at = slot * head_dim + i;
  if (kv.type == KvType::F16) return tensor::f16_to_f32(reinterpret_cast<const uint16_t*>(tile)[at]);
  const uint16_t scale = kv_q8_scales(tile, head_dim, kv.block_size)[slot * (head_dim / kKvQ8Block) + i / kKvQ8Block];
  return static_cast<float>(reinterpret_cast<const int8_t*>(tile)[at]) * tensor::f16_to_f32(scale);
}

void attention_heads_reference(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head,
                               int head_dim, int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
  for (int h = 0; h < n_rows * heads_per_row; ++h)
    attention_head_reference(q + h * head_dim, kv, kv_head, head_dim, n_kv + h / heads_per_row, scale, scores,
                             out + h * head_dim, window);
}

}  // namespace nanoserve::kernels
