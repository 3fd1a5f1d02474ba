#include "tokenizer/vocab_gguf.h"

#include <stdexcept>

#include "tokenizer/merges.h"

namespace nanoserve::tokenizer {
namespace {

constexpr const char* kModelKey = "tokenizer.ggml.model";
constexpr const char* kPreKey = "tokenizer.ggml.pre";
constexpr const char* kTokensKey = "tokenizer.ggml.tokens";
constexpr const char* kTokenTypeKey = "tokenizer.ggml.token_type";
constexpr const char* kMergesKey = "tokenizer.ggml.merges";
constexpr const char* kBosKey = "tokenizer.ggml.bos_token_id";
constexpr const char* kEosKey = "tokenizer.ggml.eos_token_id";
constexpr const char* kPaddingKey = "tokenizer.ggml.padding_token_id";
constexpr const char* kAddBosKey = "tokenizer.ggml.add_bos_token";
constexpr const char* kAddEosKey = "tokenizer.ggml.add_eos_token";
constexpr const char* kScoresKey = "tokenizer.ggml.scores";
constexpr const char* kUnknownKey = "tokenizer.ggml.unknown_token_id";
constexpr const char* kAddSpacePrefixKey = "tokenizer.ggml.add_space_prefix";

std::optional<int32_t> optional_id(const gguf::Metadata& metadata, const char* key) {
  if (!metadata.contains(key)) return std::nullopt;
  const uint32_t id = metadata.get_u32(key);
  if (id > static_cast<uint32_t>(INT32_MAX)) throw std::runtime_error(std::string(key) + " is too large");
  return static_cast<int32_t>(id);
}

TokenType token_type_from_int(int64_t value, size_t id) {
  if (value < static_cast<int64_t>(TokenType::kNormal) || value > static_cast<int64_t>(TokenType::kByte))
    throw std::runtime_error(std::string(kTokenTypeKey) + "[" + std::to_string(id) + "] = " + std::to_string(value) +
                             " is not a token type (1..6)");
  return static_cast<TokenType>(value);
}

}  // namespace

namespace {

std::vector<Token> read_tokens(const gguf::Metadata& metadata) {
  std::vector<std::string> pieces = metadata.get_strings(kTokensKey);
  std::vector<int64_t> types;
  if (metadata.contains(kTokenTypeKey)) {
    types = metadata.get_ints(kTokenTypeKey);
    if (types.size() != pieces.size())
      throw std::runtime_error(std::string(kTokenTypeKey) + " has " + std::to_string(types.size()) + " entries but " +
                               kTokensKey + " has " + std::to_string(pieces.size()));
  }
  std::vector<Token> tokens;
  tokens.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    const TokenType type = types.empty() ? TokenType::kNormal : token_type_from_int(types[id], id);
    tokens.push_back({std::move(pieces[id]), type});
  }
  return tokens;
}

void read_byte_level(const gguf::Metadata& metadata, Vocab& vocab) {
  if (!metadata.contains(kPreKey))
    throw std::runtime_error(std::string(kPreKey) + " is missing; it names the pre-split regex (e.g. qwen2)");
  vocab.pre_split = pre_split_from_gguf_name(metadata.get_string(kPreKey));
  vocab.normalization = vocab.pre_split == PreSplit::kQwen2 ? Normalization::kNfc : Normalization::kNone;
  // As the tokenizer.json files of these families say (Llama 3, gpt-oss).
  vocab.ignore_merges = vocab.pre_split == PreSplit::kLlama3 || vocab.pre_split == PreSplit::kO200k;
  std::vector<MergePieces> merges;
  for (const std::string& merge : metadata.get_strings(kMergesKey)) merges.push_back(split_merge_string(merge));
  vocab.merges = resolve_merges(vocab.tokens, merges);
  vocab.add_bos = metadata.contains(kAddBosKey) ? metadata.get_bool(kAddBosKey) : vocab.pre_split == PreSplit::kLlama3;
}

// llama.cpp's "llama" vocabulary: scores rank the merges (bpe.h); by default a space prefix
// and BOS, as llama.cpp assumes for it.
void read_sentencepiece(const gguf::Metadata& metadata, Vocab& vocab) {
  vocab.kind = VocabKind::kSentencePiece;
  if (!metadata.contains(kScoresKey))
    throw std::runtime_error(std::string(kScoresKey) + " is missing; a 'llama' vocabulary ranks its merges by it");
  vocab.scores = metadata.get_floats(kScoresKey);
  if (vocab.scores.size() != vocab.tokens.size())
    throw std::runtime_error(std::string(kScoresKey) + " has " + std::to_string(vocab.scores.size()) +
                             " entries but " + kTokensKey + " has " + std::to_string(vocab.tokens.size()));
  vocab.unknown_id = optional_id(metadata, kUnknownKey);
  vocab.add_space_prefix = !metadata.contains(kAddSpacePrefixKey) || metadata.get_bool(kAddSpacePrefixKey);
  vocab.add_bos = !metadata.contains(kAddBosKey) || metadata.get_bool(kAddBosKey);
}

}  // namespace

Vocab vocab_from_gguf(const gguf::Metadata& metadata) {
  const std::string& model = metadata.get_string(kModelKey);
  if (model != "gpt2" && model != "llama")
    throw std::runtime_error(std::string(kModelKey) + " is '" + model +
                             "'; supported: 'gpt2' (byte-level BPE) and 'llama' (SentencePiece-style BPE)");
  Vocab vocab;
  vocab.tokens = read_tokens(metadata);
  if (model == "gpt2") {
    read_byte_level(metadata, vocab);
  } else {
    read_sentencepiece(metadata, vocab);
  }
  vocab.bos_id = optional_id(metadata, kBosKey);
  vocab.eos_id = optional_id(metadata, kEosKey);
  vocab.padding_id = optional_id(metadata, kPaddingKey);
  vocab.add_eos = metadata.contains(kAddEosKey) && metadata.get_bool(kAddEosKey);
  vocab.check_ids();
  return vocab;
}

std::vector<std::pair<std::string, gguf::Value>> vocab_to_gguf(const Vocab& vocab) {
  vocab.check_ids();
  std::vector<gguf::Value> pieces, types, merges;
  pieces.reserve(vocab.tokens.size());
  types.reserve(vocab.tokens.size());
  for (const Token& token : vocab.tokens) {
    pieces.push_back(gguf::Value::string(token.piece));
    types.push_back(gguf::Value::i32(static_cast<int32_t>(token.type)));
  }
  merges.reserve(vocab.merges.size());
  for (const auto& [left, right] : vocab.merges)
    merges.push_back(gguf::Value::string(vocab.tokens[left].piece + " " + vocab.tokens[right].piece));

  std::vector<std::pair<std::string, gguf::Value>> entries;
  const bool sentencepiece = vocab.kind == VocabKind::kSentencePiece;
  entries.emplace_back(kModelKey, gguf::Value::string(sentencepiece ? "llama" : "gpt2"));
  entries.emplace_back(kPreKey, gguf::Value::string(sentencepiece ? "default"
                                                                 : std::string(gguf_pre_name(vocab.pre_split))));
  entries.emplace_back(kTokensKey, gguf::Value::array(gguf::ValueType::STRING, std::move(pieces)));
  entries.emplace_back(kTokenTypeKey, gguf::Value::array(gguf::ValueType::INT32, std::move(types)));
  if (sentencepiece) {
    if (vocab.scores.size() != vocab.tokens.size())
      throw std::runtime_error("a SentencePiece vocabulary needs a score per token to be written as GGUF");
    std::vector<gguf::Value> scores;
    scores.reserve(vocab.scores.size());
    for (const float score : vocab.scores) scores.push_back(gguf::Value::f32(score));
    entries.emplace_back(kScoresKey, gguf::Value::array(gguf::ValueType::FLOAT32, std::move(scores)));
    entries.emplace_back(kAddSpacePrefixKey, gguf::Value::boolean(vocab.add_space_prefix));
    if (vocab.unknown_id) entries.emplace_back(kUnknownKey, gguf::Value::u32(static_cast<uint32_t>(*vocab.unknown_id)));
  } else {
    entries.emplace_back(kMergesKey, gguf::Value::array(gguf::ValueType::STRING, std::move(merges)));
  }
  const auto add_id = [&](const char* key, const std::optional<int32_t>& id) {
    if (id) entries.emplace_back(key, gguf::Value::u32(static_cast<uint32_t>(*id)));
  };
  add_id(kBosKey, vocab.bos_id);
  add_id(kEosKey, vocab.eos_id);
  add_id(kPaddingKey, vocab.padding_id);
  entries.emplace_back(kAddBosKey, gguf::Value::boolean(vocab.add_bos));
  if (vocab.add_eos) entries.emplace_back(kAddEosKey, gguf::Value::boolean(true));
  return entries;
}

}  // namespace nanoserve::tokenizer
