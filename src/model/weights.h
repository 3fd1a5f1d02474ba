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
  const float* attn_norm_b = nullptr;  // [n_embd]  Norm::Layer only (as ffn_norm_b)
  kernels::Matrix wq;             // [q_dim × n_embd]   (fused_qkv: views of attn_qkv's rows; gated_q: 2 × q_dim)
  kernels::Matrix wk, wv;         // [kv_dim × n_embd]
  const float* bq = nullptr;      // [q_dim]   qkv_bias only
  const float* bk = nullptr;      // [kv_dim]  qkv_bias only
  const float* bv = nullptr;      // [kv_dim]  qkv_bias only
  const float* q_norm = nullptr;  // [head_dim]  qk_norm only: one norm shared by every head
  const float* k_norm = nullptr;  // [head_dim]  qk_norm only
  kernels::Matrix wo;             // [n_embd × q_dim]
  const float* bo = nullptr;      // [n_embd]  projection_bias (as b_up, b_down) or attn_output_bias
  const float* attn_sinks = nullptr;  // [n_head]  attn_sinks only: each head's sink logit
  const float* ffn_norm;          // [n_embd]
  const float* ffn_norm_b = nullptr;
  kernels::Matrix w_gate, w_up;   // [n_ff × n_embd]    (fused_gate_up: views of ffn_up's rows)
  kernels::Matrix w_down;         // [n_embd × n_ff]
  const float* b_up = nullptr;    // [n_ff]
  const float* b_down = nullptr;  // [n_embd]
  // moe only (no w_gate, w_up, w_down): the router [n_expert × n_embd] (F32), and each expert's
  // matrices, views of the 3-D ffn_{gate,up,down}_exps tensors (expert e = slice e).
  kernels::Matrix router;
  std::vector<kernels::Matrix> expert_gate, expert_up;  // [n_ff_expert × n_embd] each
  std::vector<kernels::Matrix> expert_down;             // [n_embd × n_ff_expert] each
  // expert_bias only: the router's [n_expert]; expert e's gate and up biases at e × n_ff_expert,
  // its down bias at e × n_embd.
  const float* router_b = nullptr;
  const float* expert_gate_b = nullptr;  // [n_expert × n_ff_expert]
  const float* expert_up_b = nullptr;    // [n_expert × n_ff_expert]
  const float* expert_down_b = nullptr;  // [n_expert × n_embd]
  const float* post_attn_norm = nullptr;  // [n_embd]  post_norms only: on wo's output
  const float* post_ffn_norm = nullptr;   // [n_embd]  post_norms only: on w_down's output
  // shared_expert: its gate, up and down, and the vector whose dot with y gates its output.
  kernels::Matrix shared_gate, shared_up;  // [n_ff_shared × n_embd]
  kernels::Matrix shared_down;             // [n_embd × n_ff_shared]
  const float* shared_gate_inp = nullptr;  // [n_embd]
  // A delta-net layer (ModelConfig::recurrent; no wq, wk, wv, wo): the convolved channels' and
  // the output gate's projections, the convolution's taps per channel, each value head's decay
  // (ssm_a = -exp(A_log)), step bias, β and α projections, the heads' norm and the output.
  kernels::Matrix ssm_qkv;        // [ssm_conv_channels × n_embd]  (attn_qkv: q | k | v)
  kernels::Matrix ssm_z;          // [ssm_inner × n_embd]  (attn_gate)
  const float* ssm_conv = nullptr;  // [ssm_conv_channels × ssm_conv_kernel]
  const float* ssm_a = nullptr;     // [ssm_value_heads]
  const float* ssm_dt_bias = nullptr;  // [ssm_value_heads]
  kernels::Matrix ssm_beta, ssm_alpha;  // [ssm_value_heads × n_embd]
  const float* ssm_norm = nullptr;  // [ssm_head_dim]
  kernels::Matrix ssm_out;          // [n_embd × ssm_inner]
};

// The MTP block's own tensors (ModelConfig::mtp; its decoder layer is layers[n_layer]): the
// projection of [enorm(token embedding) | hnorm(the model's hidden state)] to the layer's input,
// and the norm before the shared output.
// Where the file has no embedding, output or output norm of the block's own, the model's serve.
struct MtpWeights {
  kernels::Matrix eh_proj;           // [n_embd × 2 n_embd]
  const float* enorm = nullptr;      // [n_embd]
  const float* hnorm = nullptr;      // [n_embd]
  kernels::Matrix embed;             // [n_vocab × n_embd]  nextn.embed_tokens, else token_embd
  const float* head_norm = nullptr;  // [n_embd]  nextn.shared_head_norm, else output_norm
  kernels::Matrix head;              // [n_vocab × n_embd]  nextn.shared_head_head, else output
};

struct ModelWeights {
  kernels::Matrix token_embd;         // [n_vocab × n_embd]: rows are looked up (dequantized), not multiplied
  kernels::Matrix output;             // [n_vocab × n_embd]: token_embd itself when the output is tied
  const float* output_norm;           // [n_embd]
  const float* output_norm_b = nullptr;  // [n_embd]  Norm::Layer only
  const float* position_embd = nullptr;  // [n_ctx_train × n_embd]  position_embd only: row = position
  const float* rope_freqs = nullptr;  // [rope_dims / 2]  Llama 3 scaling: frequency divisors
  // [rope_dims / 2]  Phi-3's LongRoPE frequency divisors, for contexts up to
  // rope_original_context and beyond it (Model::set_context chooses).
  const float* rope_factors_short = nullptr;
  const float* rope_factors_long = nullptr;
  std::vector<LayerWeights> layers;   // [n_cache_layers]: the model's own, then the MTP block's
  MtpWeights mtp;                     // mtp only
};

ModelWeights bind_weights(const gguf::File& file, const ModelConfig& config);

// Bytes of weights one decode step reads: every matrix once (of a mixture of experts, the
// router and the n_expert_used experts one row uses), the norms, one embedding row. Read off the
// bound weights, so that a model can be measured up without being loaded (bench's inspect_model).
uint64_t weight_bytes_per_token(const ModelWeights& weights, const ModelConfig& config);

}  // namespace nanoserve::model
