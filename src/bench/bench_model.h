// The model a benchmark runs: which file, what it is (weight type, shape), what one decode
// step reads, and which of its tokens stream no text of their own. With ignore_eos,
// nanoserve streams every token's text, special and padding tokens included ("<|im_end|>",
// "[PAD151700]"), except a token that ends inside a UTF-8 character: its text waits for the
// next token, and two tokens arrive as one chunk. Synthesized models (random weights) sample
// such tokens now and then; benchmark requests ban them with logit_bias, so every generated
// token arrives as its own chunk of text.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/config.h"

namespace nanoserve::bench {

struct BenchModel {
  std::string path;
  std::string file_name;    // the path's last part, as rows name it
  std::string preset;       // synth preset it was made from ("" for a user's file)
  std::string name;         // general.name
  std::string arch;
  std::string weight_type;  // general.file_type ("Q8_0", "Q4_K_M", ...)
  int64_t n_layer = 0, n_ctx_train = 0, n_vocab = 0;
  int64_t kv_bytes_per_position = 0;    // the KV cache's size per position (model::kv_bytes_per_position)
  int64_t kv_window_bytes = 0;          // its sliding-window layers' once full (model::kv_bytes_for)
  // The same for a Q8_0 cache; 0 where the model cannot have one (a head size not a multiple of 32).
  int64_t kv_q8_bytes_per_position = 0, kv_q8_window_bytes = 0;
  uint64_t file_bytes = 0;
  uint64_t weight_bytes_per_token = 0;  // every matrix once, as a decode step reads them
  std::vector<int32_t> silent_tokens;   // stream no text of their own (end inside a character)
  std::vector<int32_t> text_tokens;     // every other token (prompts are drawn from these)
  // The KV cache of a sequence of n positions, once full (model::kv_bytes_for), of this type.
  int64_t kv_bytes_for(int64_t n, model::KvType type = model::KvType::F16) const {
    if (type == model::KvType::Q8_0) return kv_q8_bytes_per_position * n + kv_q8_window_bytes;
    return kv_bytes_per_position * n + kv_window_bytes;
  }
  bool has_kv_type(model::KvType type) const { return type == model::KvType::F16 || kv_q8_bytes_per_position > 0; }
};

// Reads the file's metadata, tokenizer and weight layout (maps it; no weights are read).
// Throws when the file is not a model nanoserve can load.
BenchModel inspect_model(const std::string& path);

// A synth preset and weight type, written "preset:type" ("qwen2.5-0.5b:Q8_0").
struct ModelSpec {
  std::string preset;
  std::string type;
  std::string label() const { return preset + ":" + type; }
};
// Throws std::invalid_argument unless `text` is "preset:type" with a known preset.
ModelSpec parse_model_spec(const std::string& text);

// $XDG_CACHE_HOME/nanoserve/bench, else ~/.cache/nanoserve/bench.
std::string bench_cache_dir();
// Where `spec` is cached, and whether it is there yet.
std::string synth_model_path(const ModelSpec& spec);
bool synth_model_cached(const ModelSpec& spec);
// Planned work of synthesizing `spec`, in the progress bar's units (0 when cached).
double synth_units(const ModelSpec& spec);

// The cached file for `spec` (synthesized once, with the tokenizer.json of the preset's
// family from `tokenizers_dir`: qwen2_5/, qwen3/, llama3/). `on_synth` is told before a
// synthesis starts (it takes a minute or more). Throws when the tokenizer is missing.
std::string cached_synth_model(const ModelSpec& spec, const std::string& tokenizers_dir,
                               const std::function<void(const std::string&)>& on_synth);

}  // namespace nanoserve::bench
