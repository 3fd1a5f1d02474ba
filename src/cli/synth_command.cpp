// `nanoserve synth`: write a random-weight model of a real shape, for tests and benchmarks.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "cli/commands.h"
#include "model/config.h"
#include "synth/presets.h"
#include "synth/synth.h"

namespace nanoserve::cli {
namespace {

struct SynthArgs {
  std::string arch;
  std::string preset;
  std::string dims;
  synth::SynthOptions options;
};

// A small model of the golden files' shape, for when neither --preset nor --dims says more.
model::ModelConfig default_config(const std::string& arch) {
  model::ModelConfig c{.arch = arch, .n_layer = 4, .n_embd = 256, .n_ff = 768, .n_head = 4, .n_head_kv = 2,
                       .head_dim = 64, .n_vocab = 1024, .n_ctx_train = 4096,
                       .rope_base = arch == "llama" ? 500000.0f : 1000000.0f, .rms_eps = 1e-6f,
                       .tied_output = arch != "llama", .rope_scaling = std::nullopt};
  return c;
}

// --dims "layers=28,embd=1024,ff=3072,heads=16,kv_heads=8,head_dim=128,vocab=151936,ctx=40960,tied=1"
// (nextn: the multi-token-prediction blocks after the layers, nextn=0 for none)
void apply_dims(model::ModelConfig& c, const std::string& spec) {
  std::map<std::string, uint32_t*> fields = {
      {"layers", &c.n_layer}, {"embd", &c.n_embd},         {"ff", &c.n_ff},       {"heads", &c.n_head},
      {"kv_heads", &c.n_head_kv}, {"head_dim", &c.head_dim}, {"vocab", &c.n_vocab}, {"ctx", &c.n_ctx_train},
      {"nextn", &c.n_nextn}};
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--dims: expected key=value, got '" + item + "'");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    unsigned long v = 0;
    try {
      size_t used = 0;
      v = std::stoul(value, &used);
      if (used != value.size() || v > 0xFFFFFFFFul) throw std::out_of_range(value);
    } catch (const std::exception&) {
      throw std::invalid_argument("--dims: '" + key + "' needs a non-negative integer, got '" + value + "'");
    }
    if (key == "tied") {
      c.tied_output = v != 0;
    } else if (auto it = fields.find(key); it != fields.end()) {
      *it->second = static_cast<uint32_t>(v);
    } else {
      throw std::invalid_argument("--dims: unknown key '" + key +
                                  "' (layers, embd, ff, heads, kv_heads, head_dim, vocab, ctx, tied, nextn)");
    }
  }
}

void run_synth(SynthArgs& a) {
  synth::SynthOptions& o = a.options;
  if (!a.preset.empty()) {
    o.config = synth::preset(a.preset);
    if (!a.arch.empty() && a.arch != o.config.arch)
      throw std::invalid_argument("--arch " + a.arch + " contradicts preset " + a.preset + " (" + o.config.arch + ")");
  } else {
    if (a.arch.empty()) throw std::invalid_argument("give --preset or --arch");
    o.config = default_config(a.arch);
  }
  if (!a.dims.empty()) apply_dims(o.config, a.dims);
  if (o.name.empty()) o.name = (a.preset.empty() ? o.config.arch : a.preset) + "-synth-" + o.type;
  synth::SynthReport r = synth::synthesize(o);
  fmt::print("wrote {}: {} {}, {:.1f}M parameters, {} tensors, {:.1f} MB (random weights, seed {})\n", o.out_path,
             o.config.arch, o.type, r.n_params / 1e6, r.n_tensors, r.file_bytes / 1e6, o.seed);
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("synth", "Write a random-weight model with a real model's shape and layout");
  auto a = std::make_shared<SynthArgs>();
  std::string presets;
  for (const auto& p : synth::preset_names()) presets += (presets.empty() ? "" : ", ") + p;
  cmd->add_option("--arch", a->arch, "Architecture of a small default shape: llama, qwen2, qwen3 (others by --preset)");
  cmd->add_option("--preset", a->preset, "Shape of a released model: " + presets);
  cmd->add_option("--dims", a->dims, "Override shape: layers=,embd=,ff=,heads=,kv_heads=,head_dim=,vocab=,ctx=,tied=,nextn=");
  cmd->add_option("--type", a->options.type, "File type (Q4_K_M, Q8_0, F16, ...) or one weight type (Q4_K)")
      ->capture_default_str();
  cmd->add_option("--out", a->options.out_path, "Output GGUF file")->required();
  cmd->add_option("--tokenizer", a->options.tokenizer_json,
                  "Hugging Face tokenizer.json to embed (default: built-in byte-level vocabulary)");
  cmd->add_option("--chat-template", a->options.chat_template_path,
                  "Jinja chat template file to embed (default: the chat_template of the tokenizer_config.json "
                  "beside --tokenizer)");
  cmd->add_option("--name", a->options.name, "general.name");
  cmd->add_option("--seed", a->options.seed, "Random seed")->capture_default_str();
  cmd->add_option("-t,--threads", a->options.threads, "Threads (default: all cores)");
  cmd->callback([a] { run_synth(*a); });
}

}  // namespace nanoserve::cli
