// SentencePiece-style text preparation: spaces become '▁' (kSpaceMark), and the text is cut
// into words that no vocabulary piece spans, so that each word can be merged (and cached) on
// its own with exactly the result of merging the whole text at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace nanoserve::tokenizer {

// `text` with every ' ' replaced by '▁', after a '▁' of its own when `prefix`.
std::string mark_spaces(std::string_view text, bool prefix);

// `text` with every '▁' replaced by ' ' (the pieces' text when decoded).
std::string unmark_spaces(std::string_view piece);

class SpaceMarkWords {
 public:
  // Remembers the pieces of merge-able tokens (normal and user-defined) in which a '▁' follows
  // another character: the only pieces a cut before such a '▁' could split.
  explicit SpaceMarkWords(const Vocab& vocab);

  // Cuts `marked` (spaces already '▁') before each '▁' that follows another character, except
  // inside an occurrence of a remembered piece. Appends the words, in order, to `words`.
  void split(std::string_view marked, std::vector<std::string_view>& words) const;

 private:
  std::vector<std::string> spanning_;
};

}  // namespace nanoserve::tokenizer
