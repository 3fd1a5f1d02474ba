#include "server/prompt_tokens.h"

#include <fmt/format.h>

#include <string>
#include <variant>

#include "server/api_error.h"

namespace nanoserve::server {
namespace {

// encode(text, parse_special=true), after a BOS when the vocabulary adds one and the text
// does not already start with it.
std::vector<int32_t> encode_with_bos(const tokenizer::Tokenizer& tokenizer, const std::string& text) {
  std::vector<int32_t> ids = tokenizer.encode(text, true);
  const auto bos = tokenizer.bos_id();
  if (tokenizer.add_bos() && bos && (ids.empty() || ids.front() != *bos)) ids.insert(ids.begin(), *bos);
  return ids;
}

}  // namespace

std::vector<int32_t> chat_prompt_tokens(const templates::ChatTemplate& chat_template,
                                        const tokenizer::Tokenizer& tokenizer, const ChatRequest& request) {
  templates::ChatTemplateInputs inputs;
  inputs.messages = request.messages;
  inputs.tools = request.tools;
  inputs.add_generation_prompt = true;
  inputs.extra = request.template_kwargs;
  std::string text;
  try {
    text = chat_template.render(inputs);
  } catch (const templates::ChatTemplateError& e) {
    throw invalid_request(fmt::format("the model's chat template cannot render these messages: {}", e.what()),
                          "messages", "chat_template_error");
  }
  return encode_with_bos(tokenizer, text);
}

std::vector<int32_t> completion_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const CompletionRequest& request) {
  if (const auto* text = std::get_if<std::string>(&request.prompt)) return encode_with_bos(tokenizer, *text);
  const auto& ids = std::get<std::vector<int32_t>>(request.prompt);
  const auto n_tokens = static_cast<int64_t>(tokenizer.n_tokens());
  for (int32_t id : ids)
    if (id >= n_tokens)
      throw invalid_request(fmt::format("'prompt' has token id {}, outside the vocabulary (0..{})", id, n_tokens - 1),
                            "prompt", "invalid_token_id");
  return ids;
}

}  // namespace nanoserve::server
