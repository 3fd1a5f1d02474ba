// BPE on one word: start from one token per byte (byte-level vocabularies) or per character
// (SentencePiece-style ones: a character without a piece becomes its bytes' <0xNN> tokens, or
// the unknown token), then repeatedly apply the lowest-ranked merge (leftmost first among
// equal ranks), as Hugging Face's BPE model does. A SentencePiece vocabulary without merges
// (GGUF: scores only) merges two symbols wherever they make a token, the highest-scoring token
// first, as SentencePiece and llama.cpp do: the ranks are the tokens' scores, highest first,
// equal scores sharing a rank. A heap of candidate merges over a linked list of symbols keeps a
// long word (10k spaces) at O(n log n).
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace nanoserve::tokenizer {

// Working memory of encode_word(), reused across the words of one text.
struct BpeScratch {
  struct Symbol {
    int32_t id;    // -1 once merged into its left neighbour
    int32_t prev;  // index of the previous live symbol, -1 at the start
    int32_t next;  // index of the next live symbol, -1 at the end
  };
  struct Candidate {
    int32_t rank;
    int32_t pos;  // index of the left symbol
    int32_t left;
    int32_t right;
    int32_t merged;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

class BpeModel {
 public:
  // Throws std::runtime_error when a byte has no token or a merge's result is not a token.
  explicit BpeModel(const Vocab& vocab);

  // Appends the token ids of `word` (raw bytes, non-empty; SentencePiece: spaces as '▁') to `ids`.
  void encode_word(std::string_view word, BpeScratch& scratch, std::vector<int32_t>& ids) const;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // Open-addressing map from a pair of token ids to the merge that joins them.
  class MergeTable {
   public:
    struct Merge {
      int32_t rank;
      int32_t merged;
    };
    explicit MergeTable(size_t n_merges);
    void insert(int32_t left, int32_t right, Merge merge);
    const Merge* find(int32_t left, int32_t right) const;

   private:
    static uint64_t key_of(int32_t left, int32_t right) {
      return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    size_t slot_of(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
    struct Slot {
      uint64_t key;
      Merge merge;
    };
    static constexpr uint64_t kEmpty = ~uint64_t{0};
    std::vector<Slot> slots_;
    unsigned shift_;
  };

  void push_candidate(BpeScratch& scratch, int32_t pos, int32_t left, int32_t right) const;
  void byte_level_symbols(std::string_view word, BpeScratch& scratch) const;
  void character_symbols(std::string_view word, BpeScratch& scratch) const;
  void add_merges(const Vocab& vocab, const std::unordered_map<std::string_view, int32_t>& ids);
  void add_merges_from_scores(const Vocab& vocab, const std::unordered_map<std::string_view, int32_t>& ids);

  VocabKind kind_;
  // Byte-level: the token of each byte. SentencePiece: its <0xNN> token, or -1.
  std::array<int32_t, 256> byte_tokens_;
  std::optional<int32_t> unknown_id_;
  // SentencePiece: the tokens that are one character.
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> character_ids_;
  MergeTable merges_;
  bool ignore_merges_;
  // Raw bytes of every kNormal token; filled only when ignore_merges_.
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> whole_words_;
};

}  // namespace nanoserve::tokenizer
