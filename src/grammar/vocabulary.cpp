#include "grammar/vocabulary.h"

#include "grammar/plain_text.h"

namespace nanoserve::grammar {
namespace {

std::vector<std::string> without_plain(std::vector<std::string> bytes) {
  for (std::string& b : bytes)
    if (const int n = plain_characters(b); n > 0 && n <= Vocabulary::kMaxPlainCharacters) b.clear();
  return bytes;
}

}  // namespace

Vocabulary::Vocabulary(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_tokens)
    : bytes_(token_bytes), end_tokens_(std::move(end_tokens)), trie_(token_bytes),
      other_trie_(without_plain(token_bytes)) {
  const size_t words = (bytes_.size() + 63) / 64;
  plain_up_to_.assign(kMaxPlainCharacters + 1, std::vector<uint64_t>(words, 0));
  for (size_t id = 0; id < bytes_.size(); ++id) {  // first each token under its own length...
    const int n = plain_characters(bytes_[id]);
    if (n > 0 && n <= kMaxPlainCharacters) plain_up_to_[static_cast<size_t>(n)][id / 64] |= uint64_t{1} << (id % 64);
  }
  for (size_t k = 1; k < plain_up_to_.size(); ++k)  // ...then with every shorter one
    for (size_t w = 0; w < words; ++w) plain_up_to_[k][w] |= plain_up_to_[k - 1][w];
}

}  // namespace nanoserve::grammar
