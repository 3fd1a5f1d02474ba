#include "tokenizer/tokenizer.h"

#include <atomic>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/nfc.h"
#include "tokenizer/pre_split.h"
#include "tokenizer/space_mark.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::tokenizer {
namespace {

uint64_t next_serial() {
  static std::atomic<uint64_t> last_serial{0};
  return ++last_serial;
}

Vocab checked(Vocab vocab) {
  vocab.check_ids();
  return vocab;
}

// Byte-level: control and user-defined tokens are plain text; other tokens are in byte-level
// form, and one that is not decodes to its own bytes, as Hugging Face's ByteLevel decoder does.
// SentencePiece: a byte token is its byte, control and unknown tokens their text, the others
// their piece with '▁' as a space (Hugging Face's Replace and ByteFallback decoders).
std::string bytes_of(const Vocab& vocab, const Token& token) {
  if (vocab.kind == VocabKind::kSentencePiece) {
    if (token.type == TokenType::kByte)
      if (const auto byte = byte_token_value(token.piece)) return std::string(1, static_cast<char>(*byte));
    if (token.type == TokenType::kControl || token.type == TokenType::kUnknown) return token.piece;
    return unmark_spaces(token.piece);
  }
  if (token.type == TokenType::kControl || token.type == TokenType::kUserDefined) return token.piece;
  return byte_level_decode(token.piece).value_or(token.piece);
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab)
    : serial_(next_serial()), vocab_(checked(std::move(vocab))), bpe_(vocab_), space_mark_words_(vocab_) {
  token_bytes_.reserve(vocab_.tokens.size());
  ids_by_piece_.reserve(vocab_.tokens.size());
  for (size_t i = 0; i < vocab_.tokens.size(); ++i) {
    const Token& token = vocab_.tokens[i];
    const auto id = static_cast<int32_t>(i);
    token_bytes_.push_back(bytes_of(vocab_, token));
    ids_by_piece_.emplace(token.piece, id);
    if (token.type == TokenType::kControl) control_and_user_defined_.add(token.piece, id);
    if (token.type == TokenType::kUserDefined) {
      control_and_user_defined_.add(token.piece, id);
      user_defined_only_.add(token.piece, id);
    }
  }
}

Tokenizer Tokenizer::from_gguf(const gguf::Metadata& metadata) { return Tokenizer(vocab_from_gguf(metadata)); }

Tokenizer Tokenizer::from_hf_file(const std::filesystem::path& tokenizer_json) {
  return Tokenizer(load_hf_vocab(tokenizer_json));
}

void Tokenizer::encode_text(std::string_view text, BpeScratch& scratch, std::vector<std::string_view>& words,
                            WordCache& cache, std::vector<int32_t>& ids) const {
  std::string normalized;
  if (vocab_.normalization == Normalization::kNfc && may_need_nfc(text)) {
    normalized = nfc_normalize(text);
    text = normalized;
  }
  words.clear();
  if (vocab_.kind == VocabKind::kSentencePiece) {
    if (text.empty()) return;
    // Each run of text between added tokens gets its '▁' (llama.cpp's add_space_prefix after a
    // special token; Hugging Face's Prepend normalizer, which sees those runs one by one).
    normalized = mark_spaces(text, vocab_.add_space_prefix);
    text = normalized;
    space_mark_words_.split(text, words);
  } else {
    split_words(vocab_.pre_split, text, words);
  }
  const bool by_bytes = vocab_.kind == VocabKind::kByteLevel;
  for (const std::string_view word : words) {
    if ((by_bytes && word.size() == 1) || word.size() > WordCache::kMaxWordBytes) {
      bpe_.encode_word(word, scratch, ids);
    } else if (const auto cached = cache.find(word)) {
      ids.insert(ids.end(), cached->begin(), cached->end());
    } else {
      const size_t first_new = ids.size();
      bpe_.encode_word(word, scratch, ids);
      cache.insert(word, std::span<const int32_t>(ids).subspan(first_new));
    }
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special) const {
  const AddedTokenMatcher& added = parse_special ? control_and_user_defined_ : user_defined_only_;
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  BpeScratch scratch;
  std::vector<std::string_view> words;
  const WordCache::Lease lease = WordCache::borrow(serial_);
  WordCache& cache = *lease;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto match = added.find(text, pos);
    const size_t text_end = match ? match->begin : text.size();
    encode_text(text.substr(pos, text_end - pos), scratch, words, cache, ids);
    if (!match) break;
    ids.push_back(match->id);
    pos = match->begin + match->length;
  }
  return ids;
}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= token_bytes_.size())
    throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary (" +
                            std::to_string(token_bytes_.size()) + " tokens)");
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string text;
  for (const int32_t id : ids) {
    check_id(id);
    text += token_bytes_[static_cast<size_t>(id)];
  }
  if (strips_leading_space() && text.starts_with(' ')) text.erase(0, 1);
  return text;
}

std::string_view Tokenizer::token_piece(int32_t id) const {
  check_id(id);
  return token_bytes_[static_cast<size_t>(id)];
}

std::optional<int32_t> Tokenizer::find_token(std::string_view piece) const {
  const auto it = ids_by_piece_.find(piece);
  if (it == ids_by_piece_.end()) return std::nullopt;
  return it->second;
}

TokenType Tokenizer::token_type(int32_t id) const {
  check_id(id);
  return vocab_.tokens[static_cast<size_t>(id)].type;
}

}  // namespace nanoserve::tokenizer
