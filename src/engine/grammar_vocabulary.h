// The vocabulary a grammar masks (grammar/vocabulary.h), from a tokenizer: each token's bytes
// (none for control and unused tokens, which are never text) and the tokens that end generation.
// Harmony's markup tokens (text_output.h) stand as grammar::special_token_bytes of their text, so
// a grammar can require them (a forced tool call); text tokens holding byte 0xFF then get no
// bytes, as they could spell that form (and no well-formed UTF-8 holds 0xFF).
#pragma once

#include <memory>

#include "grammar/vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const tokenizer::Tokenizer& tokenizer);

}  // namespace nanoserve::engine
