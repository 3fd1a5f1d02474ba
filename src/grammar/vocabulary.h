// What a grammar needs to know of a vocabulary, worked out once and shared by every request:
// the trie of its tokens' bytes, the tokens that end generation (allowed only where the
// grammar can end), and the plain-text tokens (plain_text.h) by their length in characters
// with a second trie of the other tokens, so that a mask inside a JSON string walks only those.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/token_trie.h"

namespace nanoserve::grammar {

class Vocabulary {
 public:
  // Plain tokens longer than this are left to the walk with the others.
  static constexpr int kMaxPlainCharacters = 64;

  // token_bytes[id]: the bytes token `id` stands for; empty for tokens a grammar never allows as
  // text (control tokens), or special_token_bytes() for a control token grammars may name
  // (special_token.h). `end_tokens` end generation.
  Vocabulary(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens);

  size_t n_tokens() const { return bytes_.size(); }
  const std::string& bytes(int32_t token) const { return bytes_[static_cast<size_t>(token)]; }
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  const TokenTrie& trie() const { return trie_; }
  // Every token with bytes but the plain ones of at most kMaxPlainCharacters characters.
  const TokenTrie& other_trie() const { return other_trie_; }
  // A bit per token id: the plain tokens of 1 to k characters (k <= kMaxPlainCharacters).
  const std::vector<uint64_t>& plain_up_to(int k) const { return plain_up_to_[static_cast<size_t>(k)]; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> end_tokens_;
  TokenTrie trie_, other_trie_;
  std::vector<std::vector<uint64_t>> plain_up_to_;
};

}  // namespace nanoserve::grammar
