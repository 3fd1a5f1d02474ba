#include "model/config.h"

#include <stdexcept>
#include <string>

namespace nanoserve::model {

namespace {

struct ArchRow {
  std::string_view name;
  ArchFeatures features;  // known is set by arch_features
};

using kernels::RopeStyle;
const ArchRow kArchs[] = {
    {"llama", {.rope_style = RopeStyle::Adjacent, .writes_vocab_size = true}},
    {"qwen2", {.qkv_bias = true, .rope_style = RopeStyle::Halves}},
    {"qwen3", {.qk_norm = true, .rope_style = RopeStyle::Halves, .writes_key_length = true}},
    {"phi3", {.fused_qkv = true, .fused_gate_up = true, .rope_style = RopeStyle::Halves}},
    {"gpt2",
     {.norm = ArchFeatures::Norm::Layer,
      .ffn = ArchFeatures::Ffn::Gelu,
      .qkv_bias = true,
      .projection_bias = true,
      .position_embd = true,
      .fused_qkv = true}},
    {"gemma3",
     {.ffn = ArchFeatures::Ffn::GeluGated,
      .qk_norm = true,
      .post_norms = true,
      .embed_scale = true,
      .swa_pattern = 6,
      .swa_own_rope = true,
      .rope_style = RopeStyle::Halves,
      .writes_key_length = true}},
    {"qwen3moe", {.qk_norm = true, .moe = true, .rope_style = RopeStyle::Halves, .writes_key_length = true}},
    {"qwen35",
     {.qk_norm = true,
      .rope_style = RopeStyle::Halves,
      .writes_key_length = true,
      .delta_net = true,
      .gated_q = true,
      .ffn_norm_named_post_attention = true}},
    {"qwen35moe",
     {.qk_norm = true,
      .moe = true,
      .rope_style = RopeStyle::Halves,
      .writes_key_length = true,
      .delta_net = true,
      .gated_q = true,
      .shared_expert = true,
      .ffn_norm_named_post_attention = true}},
    {"gpt-oss",
     {.ffn = ArchFeatures::Ffn::SwigluClamped,
      .qkv_bias = true,
      .attn_output_bias = true,
      .swa_pattern = 2,
      .attn_sinks = true,
      .moe = true,
      .expert_bias = true,
      .rope_style = RopeStyle::Halves,
      .writes_key_length = true,
      .ffn_norm_named_post_attention = true}},
};

}  // namespace

ArchFeatures arch_features(std::string_view arch) {
  for (const ArchRow& row : kArchs) {
    if (row.name != arch) continue;
    ArchFeatures f = row.features;
    f.known = true;
    return f;
  }
  return {};
}

void ModelConfig::check_arch() const {
  const ArchFeatures own = arch_features(arch);
  if (!own.known) {
    std::string names;
    for (const ArchRow& row : kArchs) names += (names.empty() ? "" : ", ") + std::string(row.name);
    throw std::invalid_argument("unsupported architecture '" + arch + "' (supported: " + names + ")");
  }
  if (features != own)
    throw std::invalid_argument("features are not those of architecture '" + arch +
                                "' (arch is set when the config is made: ModelConfig{.arch = ...})");
}

void ModelConfig::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("model config: " + what); };
  try {
    check_arch();
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  if (n_layer == 0) fail("block_count must be > 0");
  if (n_embd == 0) fail("embedding_length must be > 0");
  if (n_ff == 0) fail("feed_forward_length must be > 0");
  if (n_head == 0 || n_head_kv == 0) fail("head counts must be > 0");
  if (n_head % n_head_kv != 0) fail("head_count must be a multiple of head_count_kv");
  if (head_dim == 0 || head_dim % 2 != 0) fail("head dimension must be even and > 0");
  if (rope_dims() % 2 != 0 || rope_dims() > head_dim) fail("rope.dimension_count must be even and <= the head dimension");
  if (n_vocab == 0) fail("vocabulary size must be > 0");
  if (n_ctx_train == 0) fail("context_length must be > 0");
  if (!(rope_base > 0)) fail("rope.freq_base must be > 0");
  if (!(rms_eps > 0)) fail("the norms' epsilon must be > 0");
  if (!(rope_attn_factor > 0)) fail("rope.scaling.attn_factor must be > 0");
  if (!(rope_freq_scale > 0)) fail("rope.scaling.factor must be > 0");
  if (rope_yarn && !(rope_yarn->factor > 0 && rope_yarn->original_context > 0))
    fail("yarn's rope.scaling.factor and original context must be > 0");
  if (features.swa_pattern > 0 && sliding_window == 0) fail("attention.sliding_window must be > 0");
  if (!supports_kv_type())
    fail("a q8_0 KV cache needs a head dimension that is a multiple of 32; this model's is " +
         std::to_string(head_dim) + " (use --kv-type f16)");
  if (features.moe && (n_expert == 0 || n_expert_used == 0 || n_expert_used > n_expert || n_ff_expert == 0))
    fail("expert_count, expert_used_count (at most expert_count) and expert_feed_forward_length must be > 0");
  if (features.shared_expert && n_ff_shared == 0) fail("expert_shared_feed_forward_length must be > 0");
  if (features.delta_net) {
    if (full_attention_interval == 0) fail("full_attention_interval must be > 0");
    if (ssm_conv_kernel < 1 || ssm_key_heads == 0 || ssm_value_heads == 0 || ssm_head_dim == 0)
      fail("ssm.conv_kernel, ssm.group_count, ssm.time_step_rank and ssm.state_size must be > 0");
    if (ssm_value_heads % ssm_key_heads != 0) fail("ssm.time_step_rank must be a multiple of ssm.group_count");
    if (ssm_inner != ssm_value_heads * ssm_head_dim) fail("ssm.inner_size must be ssm.time_step_rank × ssm.state_size");
  }
}

}  // namespace nanoserve::model
