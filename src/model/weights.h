// The tensors of a Llama-family model, bound in place to the mmapped GGUF file: nothing is
// copied. Binding checks every tensor the config calls for: present, the right shape, a
// type the kernels handle; the first problem throws std::runtime_error naming the tensor.
#pragma once

#include <vector>

#include "gguf/file.h"
#include "kernels/matmul.h"
#include "model/config.h"

namespace nanoserve::model {

struct LayerWeights {
  const float* attn_norm;
  kernels::Matrix wq, wk, wv;
  const float* bq = nullptr;  // qwen2: QKV biases
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // qwen3: per-head RMSNorm of q and k (head_dim weights)
  const float* k_norm = nullptr;
  kernels::Matrix wo;
  const float* ffn_norm;
  kernels::Matrix w_gate, w_up, w_down;
};

struct ModelWeights {
  kernels::Matrix token_embd;        // rows are looked up (dequantized), not multiplied
  kernels::Matrix output;            // token_embd itself when the output is tied
  const float* output_norm;
  const float* rope_freqs = nullptr;  // Llama 3 scaling: rope_dims/2 frequency divisors
  std::vector<LayerWeights> layers;
};

ModelWeights bind_weights(const gguf::File& file, const ModelConfig& config);

}  // namespace nanoserve::model
