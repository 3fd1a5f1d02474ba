// A request's prompt as token ids, the same for every caller (the server's routes, `nanoserve
// run`): text is tokenized with special tokens parsed, as llama-server does, so a chat
// template's own <|im_start|> markers become their control tokens (and so does such text inside
// a message: a client shapes its own conversation, nothing more); a BOS goes first when the
// vocabulary asks for one and the text does not already start with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

// The chat template a model speaks: its own (`source`, from tokenizer.chat_template); when it has
// none or one the interpreter cannot read, ChatML if its vocabulary has ChatML's tokens, else the
// messages' raw text (templates::kRawTextSource); a line on stderr then says which and why.
templates::ChatTemplate model_chat_template(const std::string& source, const tokenizer::Tokenizer& tokenizer);

std::vector<int32_t> text_prompt_tokens(const tokenizer::Tokenizer& tokenizer, const std::string& text);

// The messages rendered by the template (throws templates::ChatTemplateError), then tokenized as
// text_prompt_tokens does.
std::vector<int32_t> chat_prompt_tokens(const templates::ChatTemplate& chat_template,
                                        const tokenizer::Tokenizer& tokenizer,
                                        const templates::ChatTemplateInputs& inputs);

}  // namespace nanoserve::engine
