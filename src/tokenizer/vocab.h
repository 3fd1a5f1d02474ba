// Everything a BPE tokenizer is made of, independent of the file it came from (GGUF metadata:
// vocab_gguf.h; Hugging Face tokenizer.json: vocab_hf.h): byte-level (GPT-2's byte alphabet,
// a pre-split regex) or SentencePiece-style (pieces of characters with spaces as U+2581 '▁',
// bytes without a piece as <0xNN> tokens).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

enum class VocabKind {
  kByteLevel,      // GPT-2 style: tokenizer.ggml.model "gpt2"
  kSentencePiece,  // Llama 2, Mistral, Gemma, Phi-3: tokenizer.ggml.model "llama"
};

// "▁" (U+2581), SentencePiece's stand-in for a space.
inline constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

struct Token {
  // As the vocabulary stores it: the byte-level form (byte_level.h) for model tokens, the
  // plain text for control and user-defined tokens.
  std::string piece;
  TokenType type = TokenType::kNormal;
  bool operator==(const Token&) const = default;
};

struct Vocab {
  VocabKind kind = VocabKind::kByteLevel;
  std::vector<Token> tokens;  // index = id
  // SentencePiece scores (GGUF tokenizer.ggml.scores), index = id; empty where the file has
  // none (tokenizer.json: the merges say it all).
  std::vector<float> scores;
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
  // SentencePiece: a '▁' is put before each run of text between added tokens, and decoding
  // drops the text's first space (Llama 2, Mistral, Phi-3; not Gemma).
  bool add_space_prefix = false;
  std::optional<int32_t> unknown_id;  // SentencePiece: a character with neither piece nor byte token

  bool operator==(const Vocab&) const = default;

  // Appends UNUSED "[PAD{id}]" rows until there are `rows` tokens, as models whose
  // embedding matrix is larger than the tokenizer have them. Throws when rows < size.
  void pad_to(size_t rows);

  // Throws std::runtime_error when an id (merge part, bos, eos, padding) is out of range.
  void check_ids() const;
};

std::string padding_piece(size_t id);  // "[PAD{id}]"

// The byte a SentencePiece byte token stands for: "<0x41>" -> 0x41; nullopt for another piece.
std::optional<uint8_t> byte_token_value(std::string_view piece);

}  // namespace nanoserve::tokenizer
