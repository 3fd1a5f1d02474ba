#include "engine/grammar_vocabulary.h"

#include <string>
#include <vector>

#include "engine/text_output.h"

namespace nanoserve::engine {

std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const tokenizer::Tokenizer& tokenizer) {
  const auto n = static_cast<int32_t>(tokenizer.n_tokens());
  std::vector<std::string> bytes(static_cast<size_t>(n));
  std::vector<int32_t> end_tokens;
  for (int32_t id = 0; id < n; ++id) {
    if (is_end_of_generation(tokenizer, id))
      end_tokens.push_back(id);
    else if (const auto type = tokenizer.token_type(id);
             type != tokenizer::TokenType::kControl && type != tokenizer::TokenType::kUnused)
      bytes[static_cast<size_t>(id)] = std::string(tokenizer.token_piece(id));
  }
  return std::make_shared<const grammar::Vocabulary>(bytes, std::move(end_tokens));
}

}  // namespace nanoserve::engine
