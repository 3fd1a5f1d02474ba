// The shape of a Llama-family model: everything the forward pass needs to know about it,
// named as in GGUF metadata ("{arch}.block_count", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

// What a family changes in the one layer loop. A new family adds a row to the table in
// config.cpp (and binds its tensors), not a branch in the forward pass.
struct ArchFeatures {
  bool qkv_bias = false;  // biases added to q, k and v after their projections (qwen2)
  bool qk_norm = false;   // an RMSNorm over every head of q and k before RoPE (qwen3)
  // llama.cpp rotates adjacent pairs for llama, first and second halves (NEOX) for qwen.
  kernels::RopeStyle rope_style = kernels::RopeStyle::Adjacent;
};

// The features of `arch` ("llama", "qwen2", "qwen3"); throws std::invalid_argument naming the
// supported architectures for any other.
ArchFeatures arch_features(const std::string& arch);

struct ModelConfig {
  std::string arch;  // "llama", "qwen2", "qwen3"
  uint32_t n_layer = 0;
  uint32_t n_embd = 0;
  uint32_t n_ff = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;
  float rope_base = 10000.0f;
  float rms_eps = 1e-6f;
  bool tied_output = true;  // output projection shares token_embd
  std::optional<Llama3RopeScaling> rope_scaling;
  uint32_t n_rot = 0;  // rotary dimensions per head ("rope.dimension_count"); 0 = all of head_dim

  ArchFeatures features() const { return arch_features(arch); }
  bool has_qkv_bias() const { return features().qkv_bias; }
  bool has_qk_norm() const { return features().qk_norm; }
  bool rope_halves() const { return features().rope_style == kernels::RopeStyle::Halves; }
  uint32_t rope_dims() const { return n_rot ? n_rot : head_dim; }
  uint32_t q_dim() const { return n_head * head_dim; }
  uint32_t kv_dim() const { return n_head_kv * head_dim; }
  // Throws std::invalid_argument naming the first field that makes no sense.
  void validate() const;
};

// The hyperparameters of a GGUF model, from its metadata ("{arch}.block_count", ...) and
// the shape of token_embd (the vocabulary size, padding rows included); whether it has an
// output.weight decides tied_output. (Llama 3 scaling is read from the rope_freqs tensor
// by bind_weights, so rope_scaling stays empty.) Throws std::runtime_error naming a missing
// or unusable key, and std::invalid_argument for an unsupported architecture or option.
ModelConfig from_gguf(const gguf::File& file);

}  // namespace nanoserve::model
