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

// out += the weighted values of slots [from, to) of a Q8_0 value tile (one chunk of at most
// kKvQ8Chunk slots), as attention_heads defines it: per block g of 32 dimensions, each weight
// times its value's scale, quantized to an unsigned byte against the chunk's largest (the
// chunk's scale = largest / 255), the exact integer sum of those levels times the value levels,
// then out = fma(sum, chunk scale, out).
void add_q8_chunk(const float* weights, const uint8_t* tile, int64_t block_size, int64_t from, int64_t to,
                  int head_dim, float* out) {
  const uint16_t* scales = kv_q8_scales(tile, head_dim, block_size);
  for (int g = 0; g < head_dim / kKvQ8Block; ++g) {
    float scaled[kKvQ8Chunk];
    float largest = 0.0f;
    for (int64_t t = from; t < to; ++t) {
      scaled[t - from] = weights[t] * tensor::f16_to_f32(scales[g * block_size + t]);
      largest = std::max(largest, scaled[t - from]);
    }
    const KvQ8WeightScale scale(largest);
    int32_t level[kKvQ8Chunk];
    for (int64_t t = from; t < to; ++t) level[t - from] = scale.level(scaled[t - from]);
    for (int i = g * static_cast<int>(kKvQ8Block); i < (g + 1) * kKvQ8Block; ++i) {
      int32_t dot = 0;
      for (int64_t t = from; t < to; ++t)
        dot += level[t - from] * static_cast<int8_t>(tile[kv_q8_value_byte(i, t, head_dim)]);
      out[i] = std::fma(static_cast<float>(dot), scale.scale, out[i]);
    }
  }
}

// sink: the head's sink logit, -infinity for none (a term of exactly 0).
void attention_head_reference(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                              float* scores, float* out, int64_t window, float sink) {
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
  max = std::max(max, sink);
  std::fill(out, out + head_dim, 0.0f);
  double sum = sink == -INFINITY ? 0.0 : std::exp(sink - max);
  for_each_kv_run(head, start, n_kv, [&](const KvRun& run) {
    float* weights = scores + run.first;
    for (int64_t p = 0; p < run.count; ++p) {
      weights[p] = std::exp(weights[p] - max);  // 0 before the window
      sum += weights[p];
      if (kv.type == KvType::F16)
        for (int i = 0; i < head_dim; ++i) out[i] += weights[p] * kv_value_at(kv, run.v, p, i, head_dim);
    }
    if (kv.type == KvType::Q8_0)
      for (int64_t slot = 0; slot < run.count; slot += kKvQ8Chunk)
        add_q8_chunk(weights, run.v, kv.block_size, slot, std::min(run.count, slot + kKvQ8Chunk), head_dim, out);
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
  if (kv.type == KvType::F16) return tensor::f16_to_f32(reinterpret_cast<const uint16_t*>(tile)[slot * head_dim + i]);
  const uint16_t scale = kv_q8_scales(tile, head_dim, kv.block_size)[i / kKvQ8Block * kv.block_size + slot];
  return static_cast<float>(static_cast<int8_t>(tile[kv_q8_value_byte(i, slot, head_dim)])) * tensor::f16_to_f32(scale);
}

void attention_heads_reference(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head,
                               int head_dim, int64_t n_kv, float scale, float* scores, float* out, int64_t window,
                               const float* sinks) {
  for (int h = 0; h < n_rows * heads_per_row; ++h)
    attention_head_reference(q + h * head_dim, kv, kv_head, head_dim, n_kv + h / heads_per_row, scale, scores,
                             out + h * head_dim, window, sinks ? sinks[h % heads_per_row] : -INFINITY);
}

}  // namespace nanoserve::kernels
