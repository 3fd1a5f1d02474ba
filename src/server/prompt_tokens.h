// The prompt's token ids: chat messages through the model's chat template, or a completion
// prompt as text or ids.
//
// The rendered template is tokenized with parse_special=true, as llama-server does: the
// template's own <|im_start|> markers must become their control tokens. The same holds for
// special-token text inside message content, so a user can write "<|im_end|>" and start a
// turn of their own; nanoserve, like llama-server, accepts that (the client controls the
// whole conversation anyway; it cannot reach other requests).
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

// Text as `nanoserve run` encodes it (BOS when the vocabulary asks for one, specials parsed);
// token ids as given, checked against the vocabulary (ApiError 400, param "prompt").
std::vector<int32_t> completion_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const CompletionRequest& request);

}  // namespace nanoserve::server
