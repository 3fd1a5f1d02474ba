#include "tokenizer/vocab.h"

#include <stdexcept>

namespace nanoserve::tokenizer {

std::string padding_piece(size_t id) { return "[PAD" + std::to_string(id) + "]"; }

void Vocab::pad_to(size_t rows) {
  if (rows < tokens.size())
    throw std::runtime_error("cannot pad a vocabulary of " + std::to_string(tokens.size()) + " tokens to " +
                             std::to_string(rows) + " rows");
  while (tokens.size() < rows) tokens.push_back({padding_piece(tokens.size()), TokenType::kUnused});
}

void Vocab::check_ids() const {
  const auto n = static_cast<int64_t>(tokens.size());
  const auto check = [&](const std::optional<int32_t>& id, const char* what) {
    if (id && (*id < 0 || *id >= n))
      throw std::runtime_error(std::string(what) + " id " + std::to_string(*id) + " is outside the vocabulary (" +
                               std::to_string(n) + " tokens)");
  };
  check(bos_id, "BOS");
  check(eos_id, "EOS");
  check(padding_id, "padding");
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto [left, right] = merges[rank];
    if (left < 0 || left >= n || right < 0 || right >= n)
      throw std::runtime_error("merge " + std::to_string(rank) + " refers to a token outside the vocabulary");
  }
}

}  // namespace nanoserve::tokenizer
