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
      const uint16_t* k = run.k + p;  // dimension i at k[i * block_size]
      float dot = 0.0f;
      for (int i = 0; i < head_dim; ++i) dot += q[i] * tensor::f16_to_f32(k[i * kv.block_size]);
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
      const uint16_t* v = run.v + p * head_dim;
      for (int i = 0; i < head_dim; ++i) out[i] += weight * tensor::f16_to_f32(v[i]);
    }
  });
  const float inv = static_cast<float>(1.0 / sum);
  for (int i = 0; i < head_dim; ++i) out[i] *= inv;
}

}  // namespace

void attention_heads_reference(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head,
                               int head_dim, int64_t n_kv, float scale, float* scores, float* out, int64_t window) {
  for (int h = 0; h < n_rows * heads_per_row; ++h)
    attention_head_reference(q + h * head_dim, kv, kv_head, head_dim, n_kv + h / heads_per_row, scale, scores,
                             out + h * head_dim, window);
}

}  // namespace nanoserve::kernels
