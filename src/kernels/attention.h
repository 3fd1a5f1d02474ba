// Causal self-attention of one query head over a sequence's F16 KV cache.
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

// The cache of one layer of one sequence: position p's keys at k + p * stride (F16 bits),
// KV head h at offset h * head_dim; the same for v.
struct KvView {
  const uint16_t* k;
  const uint16_t* v;
  int64_t stride;
};

// out[0..head_dim) = sum_p softmax_p(scale * q·k_p) v_p over positions p < n_kv, for the
// KV head kv_head. Computed in float from the F16 cache (as llama.cpp's CPU flash
// attention does for prompt batches): scores, max-subtracted exponentials, a weighted
// sum of the values, one division at the end. scores needs room for n_kv floats.
// Uses the SIMD kernels of the best target this CPU supports.
void attention_head(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                    float* scores, float* out);

// The same in scalar code (the reference the SIMD version is tested against).
void attention_head_reference(const float* q, const KvView& kv, int kv_head, int head_dim, int64_t n_kv, float scale,
                              float* scores, float* out);

}  // namespace nanoserve::kernels
