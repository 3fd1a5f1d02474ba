// ModelConfig from GGUF metadata: the keys llama.cpp's converter writes for llama, qwen2,
// qwen3, phi3, gpt2, gemma3, qwen3moe, qwen35, qwen35moe and gpt-oss, and nothing model-specific beyond them.
#include <stdexcept>
#include <string>
#include <utility>

#include "gguf/file.h"
#include "model/config.h"

namespace nanoserve::model {
namespace {

uint32_t optional_u32(const gguf::Metadata& m, const std::string& key, uint32_t fallback) {
  return m.contains(key) ? m.get_u32(key) : fallback;
}

}  // namespace

ModelConfig from_gguf(const gguf::File& file) {
  const gguf::Metadata& m = file.metadata();
  // llama.cpp's gguf-split writes one model as several files, each with some of its tensors.
  if (const uint32_t parts = optional_u32(m, "split.count", 1); parts > 1)
    throw std::invalid_argument("this file is part " + std::to_string(optional_u32(m, "split.no", 0) + 1) +
                                " of a model split into " + std::to_string(parts) +
                                " files, and nanoserve loads a model in one file: join the parts with llama.cpp's "
                                "`llama-gguf-split --merge FIRST-PART MERGED.gguf`");
  ModelConfig c{.arch = m.get_string("general.architecture")};
  c.check_arch();  // an architecture nanoserve does not run, named before a key it lacks
  const ArchFeatures& f = c.features;
  const std::string a = c.arch + ".";
  c.n_layer = m.get_u32(a + "block_count");
  c.n_nextn = optional_u32(m, a + "nextn_predict_layers", 0);
  if (c.n_nextn >= c.n_layer) throw std::runtime_error(a + "nextn_predict_layers must be below block_count");
  c.n_layer -= c.n_nextn;
  c.n_embd = m.get_u32(a + "embedding_length");
  c.n_ff = m.get_u32(a + "feed_forward_length");
  c.n_head = m.get_u32(a + "attention.head_count");
  c.n_head_kv = optional_u32(m, a + "attention.head_count_kv", c.n_head);
  c.head_dim = c.n_head ? optional_u32(m, a + "attention.key_length", c.n_embd / c.n_head) : 0;
  if (optional_u32(m, a + "attention.value_length", c.head_dim) != c.head_dim)
    throw std::invalid_argument("attention.value_length != attention.key_length is not supported");
  c.n_ctx_train = m.get_u32(a + "context_length");
  const bool layer_norm = f.norm == ArchFeatures::Norm::Layer;
  c.rms_eps = m.get_f32(a + (layer_norm ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon"));
  c.rope_base = m.contains(a + "rope.freq_base") ? m.get_f32(a + "rope.freq_base") : 10000.0f;
  c.n_rot = optional_u32(m, a + "rope.dimension_count", c.head_dim);
  if (m.contains(a + "rope.scaling.attn_factor")) c.rope_attn_factor = m.get_f32(a + "rope.scaling.attn_factor");
  c.rope_original_context = optional_u32(m, a + "rope.scaling.original_context_length", 0);
  if (m.contains(a + "rope.scaling.type")) {
    const std::string& type = m.get_string(a + "rope.scaling.type");
    if (type == "linear")
      c.rope_freq_scale = 1.0f / m.get_f32(a + "rope.scaling.factor");
    else if (type == "yarn")  // its original context is YaRN's, not LongRoPE's
      c.rope_yarn = YarnRopeScaling{.factor = m.get_f32(a + "rope.scaling.factor"),
                                    .original_context = std::exchange(c.rope_original_context, 0u)
                                                            ? m.get_u32(a + "rope.scaling.original_context_length")
                                                            : c.n_ctx_train};
    else if (type != "none")
      throw std::invalid_argument("rope scaling '" + type + "' is not supported");
  }
  if (f.moe) {
    c.n_expert = m.get_u32(a + "expert_count");
    c.n_expert_used = m.get_u32(a + "expert_used_count");
    c.n_ff_expert = m.get_u32(a + "expert_feed_forward_length");
  }
  if (f.shared_expert) c.n_ff_shared = m.get_u32(a + "expert_shared_feed_forward_length");
  if (f.delta_net) {
    c.ssm_conv_kernel = m.get_u32(a + "ssm.conv_kernel");
    c.ssm_key_heads = m.get_u32(a + "ssm.group_count");
    c.ssm_value_heads = m.get_u32(a + "ssm.time_step_rank");
    c.ssm_head_dim = m.get_u32(a + "ssm.state_size");
    c.ssm_inner = m.get_u32(a + "ssm.inner_size");
    c.full_attention_interval = m.get_u32(a + "full_attention_interval");
  }
  // Read where present; only an architecture with sliding-window layers uses it (phi3's is ignored, as
  // llama.cpp ignores it).
  c.sliding_window = optional_u32(m, a + "attention.sliding_window", 0);
  if (f.swa_pattern > 0)
    c.rope_base_swa = m.contains(a + "rope.freq_base_swa") ? m.get_f32(a + "rope.freq_base_swa") : c.rope_base;
  const gguf::TensorInfo& embd = file.tensor("token_embd.weight");
  if (embd.dims.size() != 2) throw std::runtime_error("token_embd.weight must have 2 dimensions");
  c.n_vocab = static_cast<uint32_t>(embd.dims[1]);
  c.tied_output = file.find_tensor("output.weight") == nullptr;
  c.validate();
  return c;
}

}  // namespace nanoserve::model
