// Finds added (control / user-defined) tokens in text before it is pre-split: the
// leftmost occurrence, and of those starting there the longest, as Hugging Face's added
// vocabulary does (its Aho-Corasick automaton is LeftmostLongest).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace nanoserve::tokenizer {

class AddedTokenMatcher {
 public:
  struct Match {
    size_t begin;
    size_t length;
    int32_t id;
  };

  void add(std::string_view text, int32_t id);  // empty texts are ignored
  std::optional<Match> find(std::string_view text, size_t from) const;

 private:
  // A byte trie; children are few per node, so a short list beats a table.
  struct Node {
    int32_t id = -1;  // token ending here, or -1
    std::vector<std::pair<uint8_t, uint32_t>> children;
  };
  std::optional<uint32_t> child(uint32_t node, uint8_t byte) const;

  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> starts_token_{};  // first bytes of the tokens, to skip other text fast
};

}  // namespace nanoserve::tokenizer
