#include "engine/grammar_vocabulary.h"

#include <string>
#include <string_view>
#include <vector>

#include "engine/text_output.h"
#include "grammar/special_token.h"

namespace nanoserve::engine {

std::shared_ptr<const grammar::Vocabulary> grammar_vocabulary(const tokenizer::Tokenizer& tokenizer) {
  const auto n = static_cast<int32_t>(tokenizer.n_tokens());
  std::vector<std::string> bytes(static_cast<size_t>(n));
  std::vector<int32_t> end_tokens;
  for (int32_t id = 0; id < n; ++id) {
    const std::string_view piece = tokenizer.token_piece(id);
    const auto type = tokenizer.token_type(id);
    if (is_end_of_generation(tokenizer, id))
      end_tokens.push_back(id);
    else if (is_harmony_markup(tokenizer, id))
      bytes[static_cast<size_t>(id)] = grammar::special_token_bytes(piece);
    else if (type != tokenizer::TokenType::kControl && type != tokenizer::TokenType::kUnused &&
             piece.find(grammar::kSpecialTokenLead) == std::string_view::npos)
      bytes[static_cast<size_t>(id)] = std::string(piece);
  }
  return std::make_shared<const grammar::Vocabulary>(bytes, std::move(end_tokens));
}

}  // namespace nanoserve::engine
