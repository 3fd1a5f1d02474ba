// The tensors of a Llama-family model, bound in place to the mmapped GGUF file: nothing is
// copied. Binding checks every tensor the config calls for: present, the right shape, a
// type the kernels handle; the first problem throws std::runtime_error naming the tensor.
#pragma once

#include <vector>

#include "gguf/file.h"
#include "kernels/matmul.h"
#include "model/config.h"

namespace nanoserve::model {

// Shapes: a Matrix of [n_out × n_in] has n_out rows of n_in weights and maps an activation
// row of n_in to one of n_out. q_dim = n_head × head_dim, kv_dim = n_head_kv × head_dim.
struct LayerWeights {
  const float* attn_norm;         // [n_embd]
  kernels::Matrix wq;             // [q_dim × n_embd]
  kernels::Matrix wk, wv;         // [kv_dim × n_embd]
  const float* bq = nullptr;      // [q_dim]   qkv_bias only
  const float* bk = nullptr;      // [kv_dim]  qkv_bias only
  const float* bv = nullptr;      // [kv_dim]  qkv_bias only
  const float* q_norm = nullptr;  // [head_dim]  qk_norm only: one norm shared by every head
  const float* k_norm = nullptr;  // [head_dim]  qk_norm only
  kernels::Matrix wo;             // [n_embd × q_dim]
  const float* ffn_norm;          // [n_embd]
  kernels::Matrix w_gate, w_up;   // [n_ff × n_embd]
  kernels::Matrix w_down;         // [n_embd × n_ff]
};

struct ModelWeights {
  kernels::Matrix token_embd;         // [n_vocab × n_embd]: rows are looked up (dequantized), not multiplied
  kernels::Matrix output;             // [n_vocab × n_embd]: token_embd itself when the output is tied
  const float* output_norm;           // [n_embd]
  const float* rope_freqs = nullptr;  // [rope_dims / 2]  Llama 3 scaling: frequency divisors
  std::vector<LayerWeights> layers;   // [n_layer]
};

ModelWeights bind_weights(const gguf::File& file, const ModelConfig& config);

}  // namespace nanoserve::model
