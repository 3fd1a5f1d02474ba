// The shape of a Llama-family model: everything the forward pass needs to know about it,
// named as in GGUF metadata ("{arch}.block_count", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/kv_type.h"
#include "kernels/rope.h"

namespace nanoserve::gguf {
class File;
}

namespace nanoserve::model {

// Llama 3.x frequency scaling (rope_type "llama3"): stored in GGUF as the rope_freqs tensor.
struct Llama3RopeScaling {
  float factor = 32.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  uint32_t original_context = 8192;
};

// YaRN scaling (rope.scaling.type "yarn"; gpt-oss): kernels::Yarn's settings. beta_fast and
// beta_slow are llama.cpp's defaults, which it uses whatever the file says.
struct YarnRopeScaling {
  float factor = 1.0f;                // "rope.scaling.factor"
  uint32_t original_context = 0;      // "rope.scaling.original_context_length" (else context_length)
  float beta_fast = 32.0f, beta_slow = 1.0f;
};

// What a family changes in the one layer loop. A new family adds a row to the table in
// config.cpp (and binds its tensors), not a branch in the forward pass.
struct ArchFeatures {
  enum class Norm { Rms, Layer };       // RMSNorm with a weight; LayerNorm with a weight and a bias (gpt2)
  // down(silu(gate) * up); down(gelu(up + b)) + b (gpt2); down(gelu(gate) * up) (gemma3);
  // down(swiglu_clamped(gate, up)) (gpt-oss's experts: kernels::swiglu_clamped, alpha 1.702, limit 7)
  enum class Ffn { SiluGated, Gelu, GeluGated, SwigluClamped };
  // SwigluClamped's constants (llama.cpp's LLM_FFN_SWIGLU_OAI_MOE, gpt-oss's model card).
  static constexpr float kSwigluAlpha = 1.702f, kSwigluLimit = 7.0f;
  Norm norm = Norm::Rms;
  Ffn ffn = Ffn::SiluGated;
  bool qkv_bias = false;  // biases added to q, k and v after their projections (qwen2, gpt2)
  // Biases added after the attention output and the feed-forward projections (gpt2).
  bool projection_bias = false;
  // A bias after the attention output alone (gpt-oss; projection_bias has it too).
  bool attn_output_bias = false;
  // Positions as learned embeddings added to the token's (position_embd), and no RoPE (gpt2).
  bool position_embd = false;
  bool qk_norm = false;   // an RMSNorm over every head of q and k before RoPE (qwen3)
  // One matrix for q, k and v (attn_qkv: rows q | k | v), one for gate and up (ffn_up: rows
  // gate | up), bound as views of their rows (phi3).
  bool fused_qkv = false;
  bool fused_gate_up = false;
  // Each block's output RMS-normed before it joins the residual (post_attention_norm,
  // post_ffw_norm), and the embedding scaled by √n_embd (gemma3).
  bool post_norms = false;
  bool embed_scale = false;
  // Sliding-window layers: layer l attends to the last sliding_window positions only unless
  // l % swa_pattern == swa_pattern - 1 (a global layer) (gemma3: 5 local, 1 global; gpt-oss:
  // even layers local). 0 = every layer global.
  int swa_pattern = 0;
  // The local layers rotate by RoPE base rope_base_swa without scaling (gemma3); without it they
  // rotate as the global ones (gpt-oss).
  bool swa_own_rope = false;
  // A per-head learned logit in each attention softmax's denominator (attn_sinks; gpt-oss).
  bool attn_sinks = false;
  // A mixture of experts in place of the feed-forward (qwen3moe): a router picks n_expert_used of
  // n_expert experts per row (model/moe.cpp).
  bool moe = false;
  // Biases on the router's logits and on every expert's gate, up and down (gpt-oss). The
  // experts' weights are then softmax over the chosen experts' logits (what llama.cpp computes
  // for gpt-oss: the same numbers as renormalising the chosen of a softmax over all).
  bool expert_bias = false;
  // llama.cpp rotates adjacent pairs for llama, first and second halves (NEOX) for qwen
  // (position_embd models are not rotated).
  kernels::RopeStyle rope_style = kernels::RopeStyle::Adjacent;
  // Metadata llama.cpp's converter writes for the family beyond the common keys, which the
  // loader does not need and synth writes as the converter does: attention.key_length even
  // where it is n_embd / n_head (qwen3, qwen3moe, gemma3); vocab_size and rope.dimension_count (llama).
  bool writes_key_length = false;
  bool writes_vocab_size = false;
  // Gated delta-net ("linear attention") layers, all but every full_attention_interval-th: a
  // recurrent state per sequence instead of keys and values (model/delta_net.cpp); the family
  // names the feed-forward block's pre-norm post_attention_norm (qwen35, qwen35moe).
  bool delta_net = false;
  // attn_q's rows per head are q then a gate: attention's output times sigmoid(gate) (qwen35moe).
  bool gated_q = false;
  // A shared expert beside the routed ones, its output scaled by sigmoid(ffn_gate_inp_shexp · y)
  // (qwen35moe).
  bool shared_expert = false;
  // The feed-forward block's pre-norm is named post_attention_norm (qwen35, qwen35moe, gpt-oss).
  bool ffn_norm_named_post_attention = false;
  // Whether these are an architecture's: false for a name arch_features does not know, and for
  // a config made before its arch was set (ModelConfig::validate() rejects both).
  bool known = false;

  bool operator==(const ArchFeatures&) const = default;
};

// The features of `arch` ("llama", "qwen2", "qwen3", "phi3", "gpt2", "gemma3", "qwen3moe", "qwen35",
// "qwen35moe", "gpt-oss"): the
// one place an architecture's name decides anything. For any other name, features with known false.
ArchFeatures arch_features(std::string_view arch);

// The KV cache's types, for the rooms above that choose one (kernels/kv_type.h).
using kernels::KvType;
using kernels::kv_type_name;
using kernels::parse_kv_type;
using kernels::parse_optional_kv_type;

struct ModelConfig {
  std::string arch;  // "llama", "qwen2", "qwen3", "phi3", "gpt2", "gemma3", "qwen3moe", "qwen35", "qwen35moe", "gpt-oss"
  // arch's features, filled once when the config is made (ModelConfig{.arch = "qwen3", ...}):
  // every reader tests these flags, none compares the name. Setting arch on a config already
  // made leaves them stale, which validate() rejects.
  ArchFeatures features = arch_features(arch);
  uint32_t n_layer = 0;
  uint32_t n_embd = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  float rope_base = 10000.0f;
  float rms_eps = 1e-6f;  // the norms' epsilon (LayerNorm's too: "attention.layer_norm_epsilon")
  bool tied_output = true;  // output projection shares token_embd
  std::optional<Llama3RopeScaling> rope_scaling = std::nullopt;
  std::optional<YarnRopeScaling> rope_yarn = std::nullopt;  // every layer's, local ones too (no swa_own_rope)
  uint32_t n_rot = 0;  // rotary dimensions per head ("rope.dimension_count"); 0 = all of head_dim
  // RoPE's cos and sin are multiplied by this ("rope.scaling.attn_factor"; Phi-3's LongRoPE).
  float rope_attn_factor = 1.0f;
  // The context the short rope factors serve ("rope.scaling.original_context_length"; 0 = none):
  // beyond it, the long ones (Phi-3's LongRoPE).
  uint32_t rope_original_context = 0;
  // Linear RoPE scaling ("rope.scaling.type" linear): every angle times 1 / "rope.scaling.factor"
  // (on global layers only where there are sliding-window ones).
  float rope_freq_scale = 1.0f;
  uint32_t sliding_window = 0;     // "attention.sliding_window": swa_pattern's local layers' (unused elsewhere)
  float rope_base_swa = 10000.0f;  // "rope.freq_base_swa": the local layers' RoPE base
  uint32_t n_expert = 0;       // "expert_count" (moe)
  uint32_t n_expert_used = 0;  // "expert_used_count": experts per row
  uint32_t n_ff_expert = 0;    // "expert_feed_forward_length": an expert's hidden width
  uint32_t n_ff_shared = 0;    // "expert_shared_feed_forward_length" (shared_expert)
  // The delta-net layers' shape (delta_net): "ssm.conv_kernel" taps, "ssm.group_count" key heads,
  // "ssm.time_step_rank" value heads, "ssm.state_size" each head's dimension, "ssm.inner_size"
  // the value heads' width; every "full_attention_interval"-th layer attends instead.
  uint32_t ssm_conv_kernel = 0, ssm_key_heads = 0, ssm_value_heads = 0, ssm_head_dim = 0, ssm_inner = 0;
  uint32_t full_attention_interval = 0;
  // Multi-token-prediction blocks after the model's own ("nextn_predict_layers"; block_count
  // counts them; n_layer is the model's own layers): read past unless mtp.
  uint32_t n_nextn = 0;
  // The first of them runs as a drafter (model/mtp.cpp; ModelOptions::mtp): a full-attention
  // layer after the model's own, whose keys and values the KV cache keeps as its layer n_layer.
  bool mtp = false;
  // How the KV cache stores keys and values: not in the file, the server's choice
  // (ModelOptions::kv_type); every cache made for this config follows it.
  kernels::KvType kv_type = kernels::KvType::F16;

  uint32_t rope_dims() const { return n_rot ? n_rot : head_dim; }
  uint32_t q_dim() const { return n_head * head_dim; }
  uint32_t kv_dim() const { return n_head_kv * head_dim; }
  // The layers a KV cache made for this config holds: the model's own, then the MTP block's.
  uint32_t n_cache_layers() const { return n_layer + (mtp ? 1 : 0); }
  bool is_mtp(uint32_t layer) const { return mtp && layer >= n_layer; }
  // Whether layer attends through a sliding window (see ArchFeatures::swa_pattern); the MTP
  // block attends to every position.
  bool is_local(uint32_t layer) const {
    const int pattern = features.swa_pattern;
    return !is_mtp(layer) && pattern > 0 && static_cast<int>(layer % pattern) < pattern - 1;
  }
  // Whether layer reads only its window (a local layer with a window): the KV cache keeps only
  // that window of its keys and values (KvWindow).
  bool windowed(uint32_t layer) const { return sliding_window > 0 && is_local(layer); }
  uint32_t n_windowed_layers() const {
    uint32_t n = 0;
    for (uint32_t l = 0; l < n_layer; ++l) n += windowed(l) ? 1 : 0;
    return n;
  }
  // Whether layer is a delta-net layer: a recurrent state per sequence, no keys and values.
  bool recurrent(uint32_t layer) const {
    return !is_mtp(layer) && features.delta_net && full_attention_interval > 0 &&
           (layer + 1) % full_attention_interval != 0;
  }
  uint32_t n_recurrent_layers() const {
    uint32_t n = 0;
    for (uint32_t l = 0; l < n_layer; ++l) n += recurrent(l) ? 1 : 0;
    return n;
  }
  // The delta-net's convolved channels (q and k of every key head, then v): attn_qkv's rows.
  uint32_t ssm_conv_channels() const { return 2 * ssm_key_heads * ssm_head_dim + ssm_inner; }
  // Throws std::invalid_argument naming the supported architectures unless arch is one of them
  // and features are its features.
  void check_arch() const;
  // Throws std::invalid_argument naming the first field that makes no sense (check_arch first).
  void validate() const;
  // Whether this shape can have a cache of kv_type (Q8_0: a head size that is a multiple of 32).
  bool supports_kv_type() const { return kv_type == KvType::F16 || head_dim % kernels::kKvQ8Block == 0; }
};

// The hyperparameters of a GGUF model, from its metadata ("{arch}.block_count", ...) and
// the shape of token_embd (the vocabulary size, padding rows included); whether it has an
// output.weight decides tied_output. (Llama 3 scaling is read from the rope_freqs tensor
// by bind_weights, so rope_scaling stays empty.) Throws std::runtime_error naming a missing
// or unusable key, and std::invalid_argument for an unsupported architecture or option.
ModelConfig from_gguf(const gguf::File& file);

}  // namespace nanoserve::model
