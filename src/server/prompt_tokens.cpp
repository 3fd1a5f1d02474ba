#include "server/prompt_tokens.h"

#include <fmt/format.h>

#include <string>
#include <variant>

#include "engine/prompt.h"
#include "server/api_error.h"

namespace nanoserve::server {

std::vector<int32_t> chat_prompt_tokens(const templates::ChatTemplate& chat_template,
                                        const tokenizer::Tokenizer& tokenizer, const ChatRequest& request) {
  templates::ChatTemplateInputs inputs;
  inputs.messages = request.messages;
  inputs.tools = request.tools;
  inputs.add_generation_prompt = true;
  inputs.extra = request.template_kwargs;
  try {
    return engine::chat_prompt_tokens(chat_template, tokenizer, inputs);
  } catch (const templates::ChatTemplateError& e) {
    throw invalid_request(fmt::format("the model's chat template cannot render these messages: {}", e.what()),
                          "messages", "chat_template_error");
  }
}

std::vector<int32_t> completion_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const CompletionRequest& request) {
  if (const auto* text = std::get_if<std::string>(&request.prompt)) return engine::text_prompt_tokens(tokenizer, *text);
  const auto& ids = std::get<std::vector<int32_t>>(request.prompt);
  const auto n_tokens = static_cast<int64_t>(tokenizer.n_tokens());
  for (int32_t id : ids)
    if (id >= n_tokens)
      throw invalid_request(fmt::format("'prompt' has token id {}, outside the vocabulary (0..{})", id, n_tokens - 1),
                            "prompt", "invalid_token_id");
  return ids;
}

}  // namespace nanoserve::server
