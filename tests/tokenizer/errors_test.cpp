// Bad inputs give errors that say what is wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_paths.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::tokenizer {
namespace {

// A complete byte-level vocabulary: the 256 byte tokens, "ab" and "abc" with their merges.
Vocab small_vocab() {
  Vocab vocab;
  for (int b = 0; b < 256; ++b) vocab.tokens.push_back({byte_level_encode(std::string(1, static_cast<char>(b)))});
  vocab.tokens.push_back({"ab"});
  vocab.tokens.push_back({"abc"});
  vocab.tokens.push_back({"<|end|>", TokenType::kControl});
  vocab.merges = {{'a', 'b'}, {256, 'c'}};
  vocab.eos_id = 258;
  return vocab;
}

std::vector<std::pair<std::string, gguf::Value>> small_entries() { return vocab_to_gguf(small_vocab()); }

void set_entry(std::vector<std::pair<std::string, gguf::Value>>& entries, const std::string& key, gguf::Value value) {
  for (auto& entry : entries)
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  entries.emplace_back(key, std::move(value));
}

void expect_gguf_error(const std::vector<std::pair<std::string, gguf::Value>>& entries, const std::string& message) {
  gguf::Metadata metadata;
  for (const auto& [key, value] : entries) metadata.add(key, value);
  try {
    Tokenizer::from_gguf(metadata);
    ADD_FAILURE() << "no error; expected one containing: " << message;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Errors, SmallVocabWorks) {
  const Tokenizer tok(small_vocab());
  EXPECT_EQ(tok.encode("abc ab<|end|>"), (std::vector<int32_t>{257, ' ', 256, 258}));
}

TEST(Errors, GgufModelAndPre) {
  auto entries = small_entries();
  set_entry(entries, "tokenizer.ggml.model", gguf::Value::string("bert"));
  expect_gguf_error(entries, "tokenizer.ggml.model is 'bert'; supported: 'gpt2' (byte-level BPE) and 'llama'");
  set_entry(entries, "tokenizer.ggml.model", gguf::Value::string("t5"));
  expect_gguf_error(entries, "tokenizer.ggml.model is 't5'");

  // A SentencePiece-style vocabulary ranks its merges by its scores: one per token.
  entries = small_entries();
  set_entry(entries, "tokenizer.ggml.model", gguf::Value::string("llama"));
  expect_gguf_error(entries, "tokenizer.ggml.scores is missing");
  set_entry(entries, "tokenizer.ggml.scores", gguf::Value::f32s({0.0f, -1.0f}));
  expect_gguf_error(entries, "tokenizer.ggml.scores has 2 entries but tokenizer.ggml.tokens has 259");

  entries = small_entries();
  set_entry(entries, "tokenizer.ggml.pre", gguf::Value::string("falcon"));
  expect_gguf_error(entries, "unsupported tokenizer.ggml.pre 'falcon'");

  entries = small_entries();
  std::erase_if(entries, [](const auto& e) { return e.first == "tokenizer.ggml.pre"; });
  expect_gguf_error(entries, "tokenizer.ggml.pre is missing");

  entries = small_entries();
  std::erase_if(entries, [](const auto& e) { return e.first == "tokenizer.ggml.tokens"; });
  expect_gguf_error(entries, "tokenizer.ggml.tokens");
}

TEST(Errors, GgufTokenTypesAndIds) {
  auto entries = small_entries();
  set_entry(entries, "tokenizer.ggml.token_type", gguf::Value::i32s({1, 1, 1}));
  expect_gguf_error(entries, "tokenizer.ggml.token_type has 3 entries");

  entries = small_entries();
  std::vector<int32_t> types(259, 1);
  types[7] = 9;
  set_entry(entries, "tokenizer.ggml.token_type", gguf::Value::i32s(types));
  expect_gguf_error(entries, "tokenizer.ggml.token_type[7] = 9");

  entries = small_entries();
  set_entry(entries, "tokenizer.ggml.eos_token_id", gguf::Value::u32(259));
  expect_gguf_error(entries, "EOS id 259 is outside the vocabulary");
}

TEST(Errors, BadMerges) {
  auto entries = small_entries();
  set_entry(entries, "tokenizer.ggml.merges", gguf::Value::strings({"a b", "abc"}));
  expect_gguf_error(entries, "bad merge 'abc'");

  set_entry(entries, "tokenizer.ggml.merges", gguf::Value::strings({"a b", "ab x y"}));
  expect_gguf_error(entries, "bad merge 'ab x y'");

  set_entry(entries, "tokenizer.ggml.merges", gguf::Value::strings({"a b", "ab zz"}));
  expect_gguf_error(entries, "bad merge 1 'ab zz': 'zz' is not a token");

  set_entry(entries, "tokenizer.ggml.merges", gguf::Value::strings({"a b", "b c"}));
  expect_gguf_error(entries, "bad merge 1 'b c': its result 'bc' is not a token");

  Vocab vocab = small_vocab();
  vocab.merges.push_back({999, 1});
  EXPECT_THROW(Tokenizer{vocab}, std::runtime_error);
}

TEST(Errors, MissingByteToken) {
  Vocab vocab = small_vocab();
  vocab.tokens[0x41].type = TokenType::kControl;  // 'A' is no longer a model token
  try {
    Tokenizer tok(vocab);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no token for byte 0x41"), std::string::npos) << e.what();
  }
}

TEST(Errors, OutOfRangeIds) {
  const Tokenizer tok(small_vocab());
  EXPECT_THROW(tok.decode(std::vector<int32_t>{1, 259}), std::out_of_range);
  EXPECT_THROW(tok.decode(std::vector<int32_t>{-1}), std::out_of_range);
  EXPECT_THROW(tok.token_piece(100000), std::out_of_range);
  EXPECT_THROW(tok.token_type(-5), std::out_of_range);
  Vocab vocab = small_vocab();
  vocab.bos_id = -2;
  EXPECT_THROW(vocab_to_gguf(vocab), std::runtime_error);
  EXPECT_THROW(vocab.pad_to(10), std::runtime_error);
}

void expect_hf_error(const nlohmann::json& tokenizer_json, const std::string& message) {
  try {
    vocab_from_hf_json(tokenizer_json.dump());
    ADD_FAILURE() << "no error; expected one containing: " << message;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Errors, UnsupportedTokenizerJson) {
  const auto base = nlohmann::json::parse(test::read_file(test::shared_path("tokenizers/qwen3/tokenizer.json")));

  auto json = base;
  json["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+|\\w+";
  expect_hf_error(json, "unsupported pre-tokenizer regex '\\s+|\\w+'");

  json = base;
  json["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  expect_hf_error(json, "unsupported pre_tokenizer");

  json = base;
  json["normalizer"] = {{"type", "NFKC"}};
  expect_hf_error(json, "unsupported normalizer");

  json = base;
  json["added_tokens"][0]["lstrip"] = true;
  expect_hf_error(json, "uses lstrip, rstrip or single_word");

  json = base;
  json["model"]["merges"][5] = "no-space-here";
  expect_hf_error(json, "bad merge 'no-space-here'");

  json = base;
  json["model"]["merges"][5] = {"\u0120", "not-a-token"};
  expect_hf_error(json, "bad merge 5");

  json = base;
  json["model"]["type"] = "WordPiece";
  expect_hf_error(json, "unsupported model type 'WordPiece'");
}

}  // namespace
}  // namespace nanoserve::tokenizer
