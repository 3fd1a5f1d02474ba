// Everything a byte-level BPE tokenizer is made of, independent of the file it came from
// (GGUF metadata: vocab_gguf.h; Hugging Face tokenizer.json: vocab_hf.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/pre_split.h"

namespace nanoserve::tokenizer {

// GGUF's tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special tokens (<|im_start|>, <|endoftext|>, ...)
  kUserDefined = 4,  // added tokens that are not special (<think>, <tool_call>, ...)
  kUnused = 5,       // padding rows [PAD{id}]
  kByte = 6,
};

enum class Normalization { kNone, kNfc };

struct Token {
  // As the vocabulary stores it: the byte-level form (byte_level.h) for model tokens, the
  // plain text for control and user-defined tokens.
  std::string piece;
  TokenType type = TokenType::kNormal;
  bool operator==(const Token&) const = default;
};

struct Vocab {
  std::vector<Token> tokens;  // index = id
  // BPE merges, lowest rank (applied first) first: ids of the left and right tokens.
  std::vector<std::pair<int32_t, int32_t>> merges;
  PreSplit pre_split = PreSplit::kQwen2;
  Normalization normalization = Normalization::kNone;
  // A pre-split word that is itself a token is emitted whole, without merging (Llama 3).
  bool ignore_merges = false;
  std::optional<int32_t> bos_id;
  std::optional<int32_t> eos_id;
  std::optional<int32_t> padding_id;
  // Whether a caller should put BOS before (EOS after) an encoded prompt; encode() never does.
  bool add_bos = false;
  bool add_eos = false;

  bool operator==(const Vocab&) const = default;

  // Appends UNUSED "[PAD{id}]" rows until there are `rows` tokens, as models whose
  // embedding matrix is larger than the tokenizer have them. Throws when rows < size.
  void pad_to(size_t rows);

  // Throws std::runtime_error when an id (merge part, bos, eos, padding) is out of range.
  void check_ids() const;
};

std::string padding_piece(size_t id);  // "[PAD{id}]"

}  // namespace nanoserve::tokenizer
