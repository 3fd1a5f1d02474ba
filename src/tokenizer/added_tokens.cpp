#include "tokenizer/added_tokens.h"

namespace nanoserve::tokenizer {

std::optional<uint32_t> AddedTokenMatcher::child(uint32_t node, uint8_t byte) const {
  for (const auto& [b, index] : nodes_[node].children)
    if (b == byte) return index;
  return std::nullopt;
}

void AddedTokenMatcher::add(std::string_view text, int32_t id) {
  if (text.empty()) return;
  starts_token_[static_cast<uint8_t>(text[0])] = true;
  uint32_t node = 0;
  for (const char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    if (const auto next = child(node, byte)) {
      node = *next;
    } else {
      nodes_.emplace_back();
      const auto created = static_cast<uint32_t>(nodes_.size() - 1);
      nodes_[node].children.emplace_back(byte, created);
      node = created;
    }
  }
  // A text listed twice keeps its first id.
  if (nodes_[node].id < 0) nodes_[node].id = id;
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::find(std::string_view text, size_t from) const {
  for (size_t begin = from; begin < text.size(); ++begin) {
    if (!starts_token_[static_cast<uint8_t>(text[begin])]) continue;
    std::optional<Match> longest;
    uint32_t node = 0;
    for (size_t pos = begin; pos < text.size(); ++pos) {
      const auto next = child(node, static_cast<uint8_t>(text[pos]));
      if (!next) break;
      node = *next;
      if (nodes_[node].id >= 0) longest = Match{begin, pos + 1 - begin, nodes_[node].id};
    }
    if (longest) return longest;
  }
  return std::nullopt;
}

}  // namespace nanoserve::tokenizer
