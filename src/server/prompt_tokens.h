// The prompt's token ids for a request of the API: chat messages through the model's chat
// template, or a completion prompt as text or ids (engine/prompt.h says how text is tokenized).
#pragma once

#include <cstdint>
#include <vector>

#include "server/chat_request.h"
#include "server/completion_request.h"
#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::server {

// Throws ApiError (400, param "messages") when the template refuses the messages.
std::vector<int32_t> chat_prompt_tokens(const templates::ChatTemplate& chat_template,
                                        const tokenizer::Tokenizer& tokenizer, const ChatRequest& request);

// Text as engine::text_prompt_tokens encodes it; token ids as given, checked against the
// vocabulary (ApiError 400, param "prompt").
std::vector<int32_t> completion_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const CompletionRequest& request);

}  // namespace nanoserve::server
