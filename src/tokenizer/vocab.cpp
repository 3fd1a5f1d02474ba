#include "tokenizer/vocab.h"

#include <stdexcept>

namespace nanoserve::tokenizer {

std::string padding_piece(size_t id) { return "[PAD" + std::to_string(id) + "]"; }

std::optional<uint8_t> byte_token_value(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return std::nullopt;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int high = digit(piece[3]), low = digit(piece[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<uint8_t>(high * 16 + low);
}

void Vocab::pad_to(size_t rows) {
  if (rows < tokens.size())
    throw std::runtime_error("cannot pad a vocabulary of " + std::to_string(tokens.size()) + " tokens to " +
                             std::to_string(rows) + " rows");
  while (tokens.size() < rows) {
    tokens.push_back({padding_piece(tokens.size()), TokenType::kUnused});
    if (!scores.empty()) scores.push_back(0.0f);
  }
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
  check(unknown_id, "unknown");
  if (!scores.empty() && scores.size() != tokens.size())
    throw std::runtime_error(std::to_string(scores.size()) + " scores for " + std::to_string(n) + " tokens");
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto [left, right] = merges[rank];
    if (left < 0 || left >= n || right < 0 || right >= n)
      throw std::runtime_error("merge " + std::to_string(rank) + " refers to a token outside the vocabulary");
  }
}

}  // namespace nanoserve::tokenizer
