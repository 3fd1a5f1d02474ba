// `nanoserve info MODEL.gguf` (or a model name): what a model file holds, readable at a glance.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_argument.h"
#include "gguf/file.h"
#include "gguf/file_type.h"

namespace nanoserve::cli {
namespace {

std::string human_bytes(double n) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (n >= 1000 && u < 4) n /= 1000, ++u;
  return fmt::format("{:.{}f} {}", n, u == 0 ? 0 : 2, units[u]);
}

std::string human_count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.2f}M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.1f}K", n / 1e3);
  return fmt::format("{:.0f}", n);
}

// A scalar metadata value as text; arrays are summarised by their length.
std::string show(const gguf::Value& v) {
  switch (v.type()) {
    case gguf::ValueType::STRING: return v.as_string();
    case gguf::ValueType::BOOL: return v.as_bool() ? "true" : "false";
    case gguf::ValueType::FLOAT32:
    case gguf::ValueType::FLOAT64: return fmt::format("{:g}", v.as_f64());
    case gguf::ValueType::ARRAY:
      return fmt::format("[{} × {}]", v.as_array().items.size(), gguf::value_type_name(v.as_array().elem_type));
    default: return v.is_integer() && v.as_i64() < 0 ? std::to_string(v.as_i64()) : std::to_string(v.as_u64());
  }
}

void print_info(const std::string& path) {
  gguf::File file = gguf::File::open(path);
  const gguf::Metadata& meta = file.metadata();
  auto text = [&](const std::string& key, const std::string& fallback = "-") {
    const gguf::Value* v = meta.find(key);
    return v ? show(*v) : fallback;
  };
  std::string arch = text("general.architecture", "(none)");

  uint64_t params = 0;
  std::map<std::string, int> type_counts;
  for (const auto& t : file.tensors()) {
    params += t.n_elements();
    ++type_counts[std::string(gguf::type_name(t.type))];
  }
  std::string file_type = "-";
  if (const gguf::Value* ft = meta.find("general.file_type")) {
    auto known = ft->is_integer() ? gguf::file_type_by_id(static_cast<uint32_t>(ft->as_u64())) : std::nullopt;
    file_type = known ? std::string(known->name) : "unknown (" + show(*ft) + ")";
  }

  fmt::print("  Model\n");
  fmt::print("    {:<24}{}\n", "name", text("general.name"));
  fmt::print("    {:<24}{}\n", "architecture", arch);
  fmt::print("    {:<24}{}\n", "parameters", human_count(static_cast<double>(params)));
  fmt::print("    {:<24}{}\n", "file type", file_type);
  fmt::print("    {:<24}{} (GGUF v{}, {} metadata keys)\n", "file size", human_bytes(static_cast<double>(file.file_size())),
             file.version(), meta.entries().size());

  fmt::print("\n  Hyperparameters\n");
  const std::string prefix = arch + ".";
  size_t width = 36;  // wider where a key needs it (Phi-3's rope.scaling.original_context_length)
  for (const auto& [key, value] : meta.entries())
    if (key.rfind(prefix, 0) == 0) width = std::max(width, key.size() - prefix.size() + 2);
  for (const auto& [key, value] : meta.entries())
    if (key.rfind(prefix, 0) == 0) fmt::print("    {:<{}}{}\n", key.substr(prefix.size()), width, show(value));

  fmt::print("\n  Tensors\n");
  fmt::print("    {:<24}{}\n", "count", file.tensors().size());
  std::string types;
  for (const auto& [name, count] : type_counts) types += fmt::format("{}{} × {}", types.empty() ? "" : ", ", count, name);
  fmt::print("    {:<24}{}\n", "types", types);

  fmt::print("\n  Tokenizer\n");
  const gguf::Value* tokens = meta.find("tokenizer.ggml.tokens");
  const gguf::Value* merges = meta.find("tokenizer.ggml.merges");
  const std::string model = text("tokenizer.ggml.model");
  if (model == "gpt2") {
    fmt::print("    {:<24}gpt2: byte-level BPE (pre-tokenizer {})\n", "model", text("tokenizer.ggml.pre"));
  } else if (model == "llama") {
    const gguf::Value* prefix = meta.find("tokenizer.ggml.add_space_prefix");
    fmt::print("    {:<24}llama: SentencePiece-style BPE (merges by score, byte fallback, space prefix {})\n", "model",
               !prefix || prefix->as_bool() ? "yes" : "no");
  } else {
    fmt::print("    {:<24}{}: not supported (supported: gpt2, llama)\n", "model", model);
  }
  fmt::print("    {:<24}{}\n", "tokens", tokens ? std::to_string(tokens->as_array().items.size()) : "-");
  fmt::print("    {:<24}{}\n", "merges", merges ? std::to_string(merges->as_array().items.size()) : "-");
  fmt::print("    {:<24}bos {}, eos {}, pad {}, add_bos {}\n", "special tokens", text("tokenizer.ggml.bos_token_id"),
             text("tokenizer.ggml.eos_token_id"), text("tokenizer.ggml.padding_token_id"),
             text("tokenizer.ggml.add_bos_token"));
  const gguf::Value* tmpl = meta.find("tokenizer.chat_template");
  fmt::print("    {:<24}{}\n", "chat template",
             tmpl ? fmt::format("present ({} characters)", tmpl->as_string().size()) : "absent (ChatML if the vocabulary has its tokens, else raw text)");
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Describe a GGUF model: architecture, hyperparameters, tensors, tokenizer");
  auto path = std::make_shared<std::string>();
  cmd->add_option("model", *path, "GGUF file, or a Hugging Face name (as serve's --model)")->required();
  cmd->callback([path] { print_info(model_file(*path)); });
}

}  // namespace nanoserve::cli
