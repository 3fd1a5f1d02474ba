#include "engine/prompt.h"

#include <cstdio>
#include <optional>

namespace nanoserve::engine {
namespace {

std::string token_text(const tokenizer::Tokenizer& tokenizer, std::optional<int32_t> id) {
  return id ? std::string(tokenizer.token_piece(*id)) : std::string();
}

}  // namespace

templates::ChatTemplate model_chat_template(const std::string& source, const tokenizer::Tokenizer& tokenizer) {
  if (source.empty()) {
    std::fprintf(stderr, "nanoserve: the model has no chat template; chat prompts use ChatML\n");
    return templates::ChatTemplate::chatml();
  }
  try {
    return templates::ChatTemplate(source, token_text(tokenizer, tokenizer.bos_id()),
                                   token_text(tokenizer, tokenizer.eos_id()));
  } catch (const templates::ChatTemplateError& e) {
    std::fprintf(stderr, "nanoserve: cannot read the model's chat template (%s); chat prompts use ChatML\n", e.what());
    return templates::ChatTemplate::chatml();
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
