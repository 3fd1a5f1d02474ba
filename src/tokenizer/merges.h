// Reading BPE merge rules from their text forms (shared by the GGUF and tokenizer.json loaders).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace nanoserve::tokenizer {

struct MergePieces {
  std::string left;
  std::string right;
};

// "left right" -> {left, right}. Throws unless there is exactly one space with a piece on
// each side (byte-level pieces never contain a space: it is stored as 'Ġ').
MergePieces split_merge_string(std::string_view merge);

// Token ids of each merge's pieces, looked up among the kNormal and kUserDefined tokens (a
// SentencePiece vocabulary's added pieces, such as Gemma's runs of spaces, merge too). Throws naming the
// merge (rank and text) when a piece is not such a token.
std::vector<std::pair<int32_t, int32_t>> resolve_merges(const std::vector<Token>& tokens,
                                                        const std::vector<MergePieces>& merges);

}  // namespace nanoserve::tokenizer
