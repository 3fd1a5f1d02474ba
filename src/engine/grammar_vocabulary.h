// The vocabulary a grammar masks (grammar/vocabulary.h), from a tokenizer: each token's bytes
// (none for control and unused tokens, which are never text) and the tokens that end generation.
#pragma once

#include <memory>

#include "grammar/vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const tokenizer::Tokenizer& tokenizer);

}  // namespace nanoserve::engine
