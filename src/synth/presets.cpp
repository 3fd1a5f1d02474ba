#include "synth/presets.h"

#include <stdexcept>
#include <utility>

namespace nanoserve::synth {

using model::ModelConfig;

namespace {

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
