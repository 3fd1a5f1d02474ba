#include "engine/prompt.h"

#include <cstdio>
#include <optional>

namespace nanoserve::engine {
namespace {

std::string token_text(const tokenizer::Tokenizer& tokenizer, std::optional<int32_t> id) {
  return id ? std::string(tokenizer.token_piece(*id)) : std::string();
}

// A model without a template it can use: ChatML where its vocabulary has ChatML's markers as
// tokens (a Qwen-style file without the key), else the messages' raw text (a base model such as
// GPT-2, to which the markers would be plain text).
templates::ChatTemplate fallback_template(const tokenizer::Tokenizer& tokenizer, const std::string& why) {
  if (tokenizer.find_token("<|im_start|>") && tokenizer.find_token("<|im_end|>")) {
    std::fprintf(stderr, "nanoserve: %s; chat prompts use ChatML\n", why.c_str());
    return templates::ChatTemplate::chatml();
  }
  std::fprintf(stderr, "nanoserve: %s and no ChatML tokens; a chat prompt is its messages' text\n", why.c_str());
  return templates::ChatTemplate::raw_text();
}

}  // namespace

templates::ChatTemplate model_chat_template(const std::string& source, const tokenizer::Tokenizer& tokenizer) {
  if (source.empty()) return fallback_template(tokenizer, "the model has no chat template");
  try {
    return templates::ChatTemplate(source, token_text(tokenizer, tokenizer.bos_id()),
                                   token_text(tokenizer, tokenizer.eos_id()));
  } catch (const templates::ChatTemplateError& e) {
    return fallback_template(tokenizer, std::string("cannot read the model's chat template (") + e.what() + ")");
  }
}

std::vector<int32_t> text_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const std::string& text) {
  std::vector<int32_t> ids = tokenizer.encode(text, true);
  const auto bos = tokenizer.bos_id();
  if (tokenizer.add_bos() && bos && (ids.empty() || ids.front() != *bos)) ids.insert(ids.begin(), *bos);
  return ids;
}

std::vector<int32_t> chat_prompt_tokens(const templates::ChatTemplate& chat_template,
                                        const tokenizer::Tokenizer& tokenizer,
                                        const templates::ChatTemplateInputs& inputs) {
  return text_prompt_tokens(tokenizer, chat_template.render(inputs));
}

}  // namespace nanoserve::engine
