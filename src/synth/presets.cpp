#include "synth/presets.h"

#include <stdexcept>
#include <utility>

namespace nanoserve::synth {

using model::ModelConfig;

namespace {

// The Qwen3.5/3.6 family's delta-net layers: heads of 128 (keys and values), a 4-tap convolution,
// every 4th layer full attention; and the one multi-token-prediction block the models ship
// (mtp_num_hidden_layers), which llama.cpp's converter keeps as a nextn block.
void qwen35_delta_net(ModelConfig& c, uint32_t key_heads, uint32_t value_heads) {
  c.ssm_conv_kernel = 4;
  c.ssm_key_heads = key_heads;
  c.ssm_value_heads = value_heads;
  c.ssm_head_dim = 128;
  c.ssm_inner = value_heads * 128;
  c.full_attention_interval = 4;
  c.n_nextn = 1;
}

// Values from each model's published config.json (hidden_size, intermediate_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size,
// max_position_embeddings, rope_theta, rms_norm_eps, tie_word_embeddings).
std::vector<std::pair<std::string, ModelConfig>> presets() {
  std::vector<std::pair<std::string, ModelConfig>> out;
  auto add = [&](std::string name, ModelConfig c) { out.emplace_back(std::move(name), std::move(c)); };

  ModelConfig qwen25_05b{.arch = "qwen2", .n_layer = 24, .n_embd = 896, .n_ff = 4864, .n_head = 14, .n_head_kv = 2,
                         .head_dim = 64, .n_vocab = 151936, .n_ctx_train = 32768, .rope_base = 1000000.0f,
                         .rms_eps = 1e-6f, .tied_output = true, .rope_scaling = std::nullopt};
  add("qwen2.5-0.5b", qwen25_05b);

  ModelConfig qwen3_06b{.arch = "qwen3", .n_layer = 28, .n_embd = 1024, .n_ff = 3072, .n_head = 16, .n_head_kv = 8,
                        .head_dim = 128, .n_vocab = 151936, .n_ctx_train = 40960, .rope_base = 1000000.0f,
                        .rms_eps = 1e-6f, .tied_output = true, .rope_scaling = std::nullopt};
  add("qwen3-0.6b", qwen3_06b);

  ModelConfig qwen3_17b = qwen3_06b;
  qwen3_17b.n_embd = 2048;
  qwen3_17b.n_ff = 6144;
  add("qwen3-1.7b", qwen3_17b);

  ModelConfig qwen3_4b = qwen3_06b;
  qwen3_4b.n_layer = 36;
  qwen3_4b.n_embd = 2560;
  qwen3_4b.n_ff = 9728;
  qwen3_4b.n_head = 32;
  add("qwen3-4b", qwen3_4b);

  ModelConfig llama32_1b{.arch = "llama", .n_layer = 16, .n_embd = 2048, .n_ff = 8192, .n_head = 32, .n_head_kv = 8,
                         .head_dim = 64, .n_vocab = 128256, .n_ctx_train = 131072, .rope_base = 500000.0f,
                         .rms_eps = 1e-5f, .tied_output = true, .rope_scaling = model::Llama3RopeScaling{}};
  add("llama-3.2-1b", llama32_1b);

  // Qwen3-30B-A3B: 128 experts of 768, 8 per token (feed_forward_length is written, unused).
  ModelConfig qwen3_30b_a3b{.arch = "qwen3moe", .n_layer = 48, .n_embd = 2048, .n_ff = 6144, .n_head = 32,
                            .n_head_kv = 4, .head_dim = 128, .n_vocab = 151936, .n_ctx_train = 40960,
                            .rope_base = 1000000.0f, .rms_eps = 1e-6f, .tied_output = false,
                            .rope_scaling = std::nullopt};
  qwen3_30b_a3b.n_expert = 128;
  qwen3_30b_a3b.n_expert_used = 8;
  qwen3_30b_a3b.n_ff_expert = 768;
  add("qwen3-30b-a3b", qwen3_30b_a3b);

  // Gemma 3 (text): 5 sliding-window layers to 1 global; rope_local_base_freq for the local ones.
  ModelConfig gemma3_1b{.arch = "gemma3", .n_layer = 26, .n_embd = 1152, .n_ff = 6912, .n_head = 4, .n_head_kv = 1,
                        .head_dim = 256, .n_vocab = 262144, .n_ctx_train = 32768, .rope_base = 1000000.0f,
                        .rms_eps = 1e-6f, .tied_output = true, .rope_scaling = std::nullopt};
  gemma3_1b.sliding_window = 512;
  gemma3_1b.rope_base_swa = 10000.0f;
  add("gemma-3-1b", gemma3_1b);

  ModelConfig gemma3_4b = gemma3_1b;  // with linear RoPE scaling (factor 8) on the global layers
  gemma3_4b.n_layer = 34;
  gemma3_4b.n_embd = 2560;
  gemma3_4b.n_ff = 10240;
  gemma3_4b.n_head = 8;
  gemma3_4b.n_head_kv = 4;
  gemma3_4b.n_vocab = 262208;
  gemma3_4b.n_ctx_train = 131072;
  gemma3_4b.sliding_window = 1024;
  gemma3_4b.rope_freq_scale = 1.0f / 8.0f;
  add("gemma-3-4b", gemma3_4b);

  // Phi-4-mini: partial rotary 0.75, LongRoPE from an original context of 4096 (the attention
  // factor as the converter computes it, sqrt(1 + ln(131072 / 4096) / ln 4096)).
  ModelConfig phi4_mini{.arch = "phi3", .n_layer = 32, .n_embd = 3072, .n_ff = 8192, .n_head = 24, .n_head_kv = 8,
                        .head_dim = 128, .n_vocab = 200064, .n_ctx_train = 131072, .rope_base = 10000.0f,
                        .rms_eps = 1e-5f, .tied_output = true, .rope_scaling = std::nullopt, .n_rot = 96};
  phi4_mini.rope_attn_factor = 1.190238f;
  phi4_mini.rope_original_context = 4096;
  phi4_mini.sliding_window = 262144;
  add("phi-4-mini", phi4_mini);

  // Qwen3.5-0.8B (dense hybrid): 24 layers, each 4th full attention (8 heads of 256 over 2 KV
  // heads, gated, a quarter rotated), the others gated delta-net (16 key and 16 value heads of
  // 128); tied embeddings.
  ModelConfig qwen35_08b{.arch = "qwen35", .n_layer = 24, .n_embd = 1024, .n_ff = 3584, .n_head = 8, .n_head_kv = 2,
                         .head_dim = 256, .n_vocab = 248320, .n_ctx_train = 262144, .rope_base = 10000000.0f,
                         .rms_eps = 1e-6f, .tied_output = true, .rope_scaling = std::nullopt, .n_rot = 64};
  qwen35_delta_net(qwen35_08b, 16, 16);
  add("qwen3.5-0.8b", qwen35_08b);

  // Qwen3.6-35B-A3B (the same text topology as Qwen3.5-35B-A3B): 40 layers, each 4th full
  // attention (16 heads of 256 over 2 KV heads, gated, a quarter of each head rotated), the
  // others gated delta-net (16 key heads, 32 value heads of 128, a 4-tap convolution); 256
  // experts of 512, 8 per token, and a shared expert of 512.
  ModelConfig qwen36_35b{.arch = "qwen35moe", .n_layer = 40, .n_embd = 2048, .n_ff = 512, .n_head = 16,
                         .n_head_kv = 2, .head_dim = 256, .n_vocab = 248320, .n_ctx_train = 262144,
                         .rope_base = 10000000.0f, .rms_eps = 1e-6f, .tied_output = false,
                         .rope_scaling = std::nullopt, .n_rot = 64};
  qwen36_35b.n_expert = 256;
  qwen36_35b.n_expert_used = 8;
  qwen36_35b.n_ff_expert = 512;
  qwen36_35b.n_ff_shared = 512;
  qwen35_delta_net(qwen36_35b, 16, 32);
  add("qwen3.6-35b-a3b", qwen36_35b);

  // GPT-2 small (124M): MHA, learned positions, LayerNorm epsilon 1e-5.
  ModelConfig gpt2_124m{.arch = "gpt2", .n_layer = 12, .n_embd = 768, .n_ff = 3072, .n_head = 12, .n_head_kv = 12,
                        .head_dim = 64, .n_vocab = 50257, .n_ctx_train = 1024, .rope_base = 10000.0f,
                        .rms_eps = 1e-5f, .tied_output = true, .rope_scaling = std::nullopt};
  add("gpt2-124m", gpt2_124m);

  // gpt-oss-20b: 24 layers alternating a 128-position sliding window and full attention, 64
  // heads of 64 over 8 KV heads, YaRN (factor 32 over 4096); 32 experts of 2880, 4 per token.
  ModelConfig gpt_oss_20b{.arch = "gpt-oss", .n_layer = 24, .n_embd = 2880, .n_ff = 2880, .n_head = 64,
                          .n_head_kv = 8, .head_dim = 64, .n_vocab = 201088, .n_ctx_train = 131072,
                          .rope_base = 150000.0f, .rms_eps = 1e-5f, .tied_output = false,
                          .rope_scaling = std::nullopt,
                          .rope_yarn = model::YarnRopeScaling{.factor = 32.0f, .original_context = 4096}};
  gpt_oss_20b.sliding_window = 128;
  gpt_oss_20b.n_expert = 32;
  gpt_oss_20b.n_expert_used = 4;
  gpt_oss_20b.n_ff_expert = 2880;
  add("gpt-oss-20b", gpt_oss_20b);

  ModelConfig gpt_oss_120b = gpt_oss_20b;  // 36 layers, 128 experts
  gpt_oss_120b.n_layer = 36;
  gpt_oss_120b.n_expert = 128;
  add("gpt-oss-120b", gpt_oss_120b);
  return out;
}

}  // namespace

ModelConfig preset(const std::string& name) {
  for (auto& [n, c] : presets())
    if (n == name) return c;
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown preset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.first);
  return names;
}

}  // namespace nanoserve::synth
