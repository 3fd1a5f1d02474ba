// The shape of a Llama-family model: everything the forward pass needs to know about it,
// named as in GGUF metadata ("{arch}.block_count", ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nanoserve::model {

// Llama 3.x frequency scaling (rope_type "llama3"): stored in GGUF as the rope_freqs tensor.
struct Llama3RopeScaling {
  float factor = 32.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  uint32_t original_context = 8192;
};

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

  bool has_qkv_bias() const { return arch == "qwen2"; }
  bool has_qk_norm() const { return arch == "qwen3"; }
  uint32_t q_dim() const { return n_head * head_dim; }
  uint32_t kv_dim() const { return n_head_kv * head_dim; }
  // Throws std::invalid_argument naming the first field that makes no sense.
  void validate() const;
};

}  // namespace nanoserve::model
