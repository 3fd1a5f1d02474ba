#include "synth/synth_vocab.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "template/chat_template.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::synth {
namespace {

tokenizer::Vocab builtin_vocab() {
  tokenizer::Vocab v;
  for (int b = 0; b < 256; ++b)
    v.tokens.push_back({tokenizer::byte_level_encode(std::string(1, static_cast<char>(b))), tokenizer::TokenType::kNormal});
  const int32_t endoftext = static_cast<int32_t>(v.tokens.size());
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"})
    v.tokens.push_back({special, tokenizer::TokenType::kControl});
  v.pre_split = tokenizer::PreSplit::kQwen2;
  v.bos_id = endoftext;
  v.padding_id = endoftext;
  v.eos_id = endoftext + 2;
  return v;
}

// tokenizer_config.json's chat_template: a string, or a list of named templates.
std::string chat_template_beside(const std::filesystem::path& tokenizer_json) {
  std::filesystem::path config = tokenizer_json.parent_path() / "tokenizer_config.json";
  std::ifstream in(config);
  if (!in) return {};
  nlohmann::json j = nlohmann::json::parse(in);
  if (!j.contains("chat_template")) return {};
  const auto& t = j["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())
    for (const auto& named : t)
      if (named.value("name", "") == "default") return named.value("template", "");
  return {};
}

}  // namespace

std::vector<std::pair<std::string, gguf::Value>> synth_vocab_metadata(const std::string& tokenizer_json,
                                                                      uint32_t n_vocab,
                                                                      const std::string& chat_template_override) {
  tokenizer::Vocab vocab = tokenizer_json.empty() ? builtin_vocab() : tokenizer::load_hf_vocab(tokenizer_json);
  if (vocab.tokens.size() > n_vocab) {
    // Added tokens past the model's rows (Gemma 3's <image_soft_token> after the 262144 of its
    // 1B model) are dropped, as llama.cpp's converter keeps the model's vocab_size; a model
    // token there means the tokenizer is not this model's.
    for (size_t id = n_vocab; id < vocab.tokens.size(); ++id)
      if (vocab.tokens[id].type == tokenizer::TokenType::kNormal)
        throw std::invalid_argument("the tokenizer has " + std::to_string(vocab.tokens.size()) +
                                    " tokens, more than the model's " + std::to_string(n_vocab) + " rows");
    vocab.tokens.resize(n_vocab);
    if (!vocab.scores.empty()) vocab.scores.resize(n_vocab);
    vocab.check_ids();
  }
  vocab.pad_to(n_vocab);
  auto entries = tokenizer::vocab_to_gguf(vocab);
  std::string chat_template = !chat_template_override.empty() ? chat_template_override
                              : tokenizer_json.empty()          ? std::string(templates::kChatMlSource)
                                                                : chat_template_beside(tokenizer_json);
  if (!chat_template.empty()) entries.emplace_back("tokenizer.chat_template", gguf::Value::string(chat_template));
  return entries;
}

}  // namespace nanoserve::synth
