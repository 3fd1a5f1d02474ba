#include "bench/bench_model.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "gguf/file.h"
#include "gguf/file_type.h"
#include "model/model.h"
#include "synth/presets.h"
#include "synth/synth.h"
#include "tokenizer/tokenizer.h"
#include "utf8/utf8.h"

namespace nanoserve::bench {
namespace {

namespace fs = std::filesystem;

// Whether a token's bytes leave an unfinished character behind (or are empty).
bool ends_inside_a_character(std::string_view bytes) {
  if (bytes.empty()) return true;
  for (size_t pos = 0; pos < bytes.size();) {
    const utf8::Char c = utf8::decode(bytes, pos);
    if (c.status == utf8::Status::kTruncated) return true;
    pos += c.length;
  }
  return false;
}

std::string weight_type_of(const gguf::Metadata& metadata) {
  const gguf::Value* value = metadata.find("general.file_type");
  if (!value || !value->is_integer()) return "unknown";
  const auto known = gguf::file_type_by_id(static_cast<uint32_t>(value->as_u64()));
  return known ? std::string(known->name) : "unknown";
}

// The tokenizer folder of a preset's family under ../shared/tokenizers' layout.
std::string tokenizer_family(const std::string& preset) {
  if (preset.rfind("qwen2.5", 0) == 0) return "qwen2_5";
  if (preset.rfind("qwen3", 0) == 0) return "qwen3";
  if (preset.rfind("llama-3", 0) == 0) return "llama3";
  // Gemma's and Phi-4's own vocabularies are not in ../shared: Qwen3's stands in, padded to the
  // preset's rows (random weights do not care which text an id spells; the shapes are real).
  if (preset.rfind("gemma-3", 0) == 0 || preset.rfind("phi-4", 0) == 0) return "qwen3";
  throw std::invalid_argument("no tokenizer family known for preset " + preset);
}

}  // namespace

BenchModel inspect_model(const std::string& path) {
  BenchModel m;
  m.path = path;
  m.file_name = fs::path(path).filename().string();
  // Mapped and bound, not loaded: a model's weights are copied once they are interleaved, and
  // the server about to load it may need all of this machine's memory (Qwen3-30B-A3B).
  const gguf::File file = gguf::File::open(path);
  const model::ModelConfig c = model::from_gguf(file);
  const gguf::Metadata& metadata = file.metadata();
  m.name = metadata.contains("general.name") ? metadata.get_string("general.name") : m.file_name;
  m.arch = c.arch;
  m.weight_type = weight_type_of(metadata);
  m.n_layer = c.n_layer;
  m.kv_bytes_per_position = model::kv_bytes_per_position(c);
  m.kv_window_bytes = model::kv_bytes_for(c, c.sliding_window) - m.kv_bytes_per_position * c.sliding_window;
  model::ModelConfig q8 = c;
  q8.kv_type = model::KvType::Q8_0;
  if (q8.supports_kv_type()) {
    m.kv_q8_bytes_per_position = model::kv_bytes_per_position(q8);
    m.kv_q8_window_bytes = model::kv_bytes_for(q8, q8.sliding_window) - m.kv_q8_bytes_per_position * q8.sliding_window;
  }
  m.n_ctx_train = c.n_ctx_train;
  m.n_vocab = c.n_vocab;
  m.file_bytes = file.file_size();
  m.weight_bytes_per_token = model::weight_bytes_per_token(model::bind_weights(file, c), c);
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(metadata);
  for (int32_t id = 0; id < static_cast<int32_t>(tok.n_tokens()); ++id) {
    if (ends_inside_a_character(tok.token_piece(id)))
      m.silent_tokens.push_back(id);
    else if (tok.token_type(id) == tokenizer::TokenType::kNormal)
      m.text_tokens.push_back(id);  // prompts: ordinary text, no specials
  }
  // Rows of the output matrix beyond the tokenizer's tokens can be sampled too.
  for (int32_t id = static_cast<int32_t>(tok.n_tokens()); id < static_cast<int32_t>(c.n_vocab); ++id)
    m.silent_tokens.push_back(id);
  if (m.text_tokens.empty()) throw std::runtime_error(path + ": no token of its vocabulary streams text");
  return m;
}

ModelSpec parse_model_spec(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("expected preset:type (e.g. qwen2.5-0.5b:Q8_0), got '" + text + "'");
  ModelSpec spec{text.substr(0, colon), text.substr(colon + 1)};
  synth::preset(spec.preset);  // throws, listing the known presets
  if (!gguf::file_type_by_name(spec.type))
    throw std::invalid_argument("unknown weight type '" + spec.type + "' in '" + text + "' (Q8_0, Q4_K_M, F16, ...)");
  return spec;
}

std::string bench_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "nanoserve" / "bench").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "nanoserve" / "bench").string();
  throw std::runtime_error("neither XDG_CACHE_HOME nor HOME says where to cache benchmark models");
}

std::string synth_model_path(const ModelSpec& spec) {
  return (fs::path(bench_cache_dir()) / (spec.preset + "-" + spec.type + ".gguf")).string();
}

bool synth_model_cached(const ModelSpec& spec) { return fs::exists(synth_model_path(spec)); }

double synth_units(const ModelSpec& spec) {
  if (synth_model_cached(spec)) return 0;
  const model::ModelConfig c = synth::preset(spec.preset);
  const double per_layer = static_cast<double>(c.n_embd) *
                           (2.0 * c.q_dim() + 2.0 * c.kv_dim() + 3.0 * c.n_ff + 3.0 * c.n_expert * c.n_ff_expert);
  const double params = static_cast<double>(c.n_vocab) * c.n_embd + c.n_layer * per_layer;
  return params / 5e5;  // time grows with the parameters; a rough calibration (experiments/serving-notes.md)
}

std::string cached_synth_model(const ModelSpec& spec, const std::string& tokenizers_dir,
                               const std::function<void(const std::string&)>& on_synth) {
  const fs::path path = synth_model_path(spec);
  if (fs::exists(path)) return path.string();
  const fs::path tokenizer = fs::path(tokenizers_dir) / tokenizer_family(spec.preset) / "tokenizer.json";
  if (!fs::exists(tokenizer))
    throw std::runtime_error("cannot synthesize " + spec.label() + ": no " + tokenizer.string() +
                             " (give --tokenizers DIR holding qwen2_5/, qwen3/, llama3/ tokenizer.json files)");
  fs::create_directories(path.parent_path());
  if (on_synth) on_synth(path.string());
  synth::SynthOptions o;
  o.config = synth::preset(spec.preset);
  o.name = spec.preset + "-synth-" + spec.type;
  o.type = spec.type;
  o.tokenizer_json = tokenizer.string();
  // Written beside its final name, then renamed: an interrupted synthesis leaves no half file.
  o.out_path = path.string() + "." + std::to_string(getpid()) + ".tmp";
  try {
    synth::synthesize(o);
  } catch (...) {
    std::error_code ignored;
    fs::remove(o.out_path, ignored);
    throw;
  }
  fs::rename(o.out_path, path);
  return path.string();
}

}  // namespace nanoserve::bench
