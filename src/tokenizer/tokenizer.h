// A BPE tokenizer that gives the same ids as Hugging Face's tokenizers: byte-level for the
// Qwen2/Qwen2.5/Qwen3 and Llama 3 families, SentencePiece-style for Llama 2, Mistral, Gemma and
// Phi-3.
//
// encode(): added tokens are cut out of the raw text first (Hugging Face's
// split_special_tokens=false); each piece between them is normalized (NFC where the
// vocabulary says so; SentencePiece: spaces as '▁', one more in front where the vocabulary
// adds a space prefix), cut into words (pre_split.h; space_mark.h) and BPE-encoded word by
// word (bpe.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/space_mark.h"
#include "tokenizer/vocab.h"
#include "tokenizer/word_cache.h"

namespace nanoserve::tokenizer {

class Tokenizer {
 public:
  // Throws std::runtime_error when the vocabulary cannot work (a byte without a token, a
  // merge whose result is not a token, an id out of range).
  explicit Tokenizer(Vocab vocab);
  static Tokenizer from_gguf(const gguf::Metadata& metadata);
  // tokenizer.json, with tokenizer_config.json from the same folder when present.
  static Tokenizer from_hf_file(const std::filesystem::path& tokenizer_json);
  // Movable, not copyable: lookup tables point into the vocabulary's strings.
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Token ids of `text`. With parse_special, control and user-defined tokens written in the
  // text become their ids; without it only user-defined ones do (control tokens are then
  // encoded as plain text, so user input cannot inject <|im_start|>). Never adds BOS/EOS:
  // see add_bos()/add_eos(). Thread-safe.
  std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;

  // The bytes of the tokens, concatenated; control tokens render as their text (Hugging
  // Face's decode with skip_special_tokens=false), without the first space where the
  // vocabulary adds a space prefix (strips_leading_space). Not necessarily valid UTF-8 (a
  // token may hold part of a character): see StreamDecoder. Throws std::out_of_range on a bad id.
  std::string decode(std::span<const int32_t> ids) const;
  // Whether decoded text loses its first space (Hugging Face's Strip decoder): the space that
  // encoding put in front (Vocab::add_space_prefix).
  bool strips_leading_space() const { return vocab_.kind == VocabKind::kSentencePiece && vocab_.add_space_prefix; }
  // The bytes one token decodes to. Throws std::out_of_range on a bad id.
  std::string_view token_piece(int32_t id) const;

  // The id of the token stored as `piece` (byte-level form for model tokens, plain text for
  // control and user-defined tokens such as "<|im_end|>").
  std::optional<int32_t> find_token(std::string_view piece) const;

  size_t n_tokens() const { return vocab_.tokens.size(); }
  TokenType token_type(int32_t id) const;
  std::optional<int32_t> bos_id() const { return vocab_.bos_id; }
  std::optional<int32_t> eos_id() const { return vocab_.eos_id; }
  std::optional<int32_t> padding_id() const { return vocab_.padding_id; }
  bool add_bos() const { return vocab_.add_bos; }
  bool add_eos() const { return vocab_.add_eos; }
  const Vocab& vocab() const { return vocab_; }

 private:
  void check_id(int32_t id) const;
  void encode_text(std::string_view text, BpeScratch& scratch, std::vector<std::string_view>& words,
                   WordCache& cache, std::vector<int32_t>& ids) const;

  uint64_t serial_;  // tells this tokenizer's word caches from another's
  Vocab vocab_;
  BpeModel bpe_;
  SpaceMarkWords space_mark_words_;
  std::vector<std::string> token_bytes_;  // index = id
  std::unordered_map<std::string_view, int32_t> ids_by_piece_;
  AddedTokenMatcher control_and_user_defined_;
  AddedTokenMatcher user_defined_only_;
};

}  // namespace nanoserve::tokenizer
