// The GGUF path: a GGUF vocabulary gives the same ids as its tokenizer.json, and a Vocab
// written as GGUF metadata is what convert_hf_to_gguf.py writes and reads back unchanged.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/file.h"
#include "support/test_paths.h"
#include "tokenizer/golden_data.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::tokenizer {
namespace {

using test::shared_path;

const std::string kQwen3VocabModel = "golden/models/qwen3vocab-qwen3-Q8_0.gguf";

gguf::Metadata metadata_of(const std::vector<std::pair<std::string, gguf::Value>>& entries) {
  gguf::Metadata metadata;
  for (const auto& [key, value] : entries) metadata.add(key, value);
  return metadata;
}

const Tokenizer& qwen3_gguf_tokenizer() {
  static const Tokenizer tokenizer = Tokenizer::from_gguf(gguf::File::open(shared_path(kQwen3VocabModel)).metadata());
  return tokenizer;
}

TEST(GgufVocab, RealQwen3VocabEncodesTheQwen3GoldenExactly) {
  const Tokenizer& tok = qwen3_gguf_tokenizer();
  EXPECT_EQ(tok.n_tokens(), 151936u);
  EXPECT_EQ(tok.bos_id(), 151643);
  EXPECT_EQ(tok.eos_id(), 151645);
  EXPECT_EQ(tok.padding_id(), 151643);
  EXPECT_FALSE(tok.add_bos());
  EXPECT_EQ(tok.token_type(151669), TokenType::kUnused);
  EXPECT_EQ(tok.token_type(151667), TokenType::kUserDefined);  // <think>
  EXPECT_EQ(tok.find_token("<|im_end|>"), 151645);

  const auto lines = test::read_golden_lines("qwen3");
  size_t matches = 0;
  for (const auto& line : lines) {
    const auto ids = tok.encode(line.text);
    if (ids == line.ids && tok.decode(ids) == line.decoded) ++matches;
    else ADD_FAILURE() << "[" << line.category << "] " << nlohmann::json(line.text).dump();
  }
  std::cout << "qwen3vocab GGUF on qwen3.jsonl: " << matches << "/" << lines.size() << "\n";
}

TEST(GgufVocab, RealQwen3VocabMatchesTheLlamaCppTokcheck) {
  const auto checks = nlohmann::json::parse(test::read_file(shared_path("golden/models/qwen3vocab-tokcheck.json")));
  ASSERT_EQ(checks.size(), 7u);
  for (const auto& check : checks) {
    const auto expected = check.at("llama").get<std::vector<int32_t>>();
    EXPECT_EQ(check.at("hf_js").get<std::vector<int32_t>>(), expected);
    EXPECT_EQ(qwen3_gguf_tokenizer().encode(check.at("text").get<std::string>()), expected) << check.at("text");
  }
}

// qwen3vocab-*.gguf was written by convert_hf_to_gguf.py from the same tokenizer.json with
// config.json's bos_token_id 151643 and vocab_size 151936.
TEST(GgufVocab, WritesTheTokenizerKeysAsConvertHfToGgufDoes) {
  Vocab vocab = load_hf_vocab(shared_path("tokenizers/qwen3/tokenizer.json"));
  vocab.bos_id = 151643;
  vocab.pad_to(151936);
  const auto entries = vocab_to_gguf(vocab);

  const auto file = gguf::File::open(shared_path(kQwen3VocabModel));
  size_t golden_keys = 0;
  for (const auto& [key, value] : file.metadata().entries()) {
    if (!key.starts_with("tokenizer.ggml.")) continue;
    ++golden_keys;
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == key; });
    ASSERT_NE(it, entries.end()) << key;
    EXPECT_TRUE(it->second == value) << key;
  }
  EXPECT_EQ(golden_keys, entries.size());
}

void expect_round_trip(const Vocab& vocab) {
  const Vocab back = vocab_from_gguf(metadata_of(vocab_to_gguf(vocab)));
  EXPECT_EQ(back.tokens.size(), vocab.tokens.size());
  EXPECT_EQ(back.merges.size(), vocab.merges.size());
  EXPECT_TRUE(back == vocab);
}

TEST(GgufVocab, RoundTripsThroughMetadata) {
  Vocab qwen3 = load_hf_vocab(shared_path("tokenizers/qwen3/tokenizer.json"));
  qwen3.bos_id = 151643;
  qwen3.pad_to(151936);
  expect_round_trip(qwen3);

  Vocab llama3 = load_hf_vocab(shared_path("tokenizers/llama3/tokenizer.json"));
  EXPECT_EQ(llama3.bos_id, 128000);
  EXPECT_EQ(llama3.eos_id, 128001);
  EXPECT_FALSE(llama3.add_bos);  // this tokenizer.json's post-processor adds nothing
  EXPECT_TRUE(llama3.ignore_merges);
  expect_round_trip(llama3);

  const Vocab tiny = vocab_from_gguf(gguf::File::open(shared_path("golden/models/tiny-qwen3-F16.gguf")).metadata());
  expect_round_trip(tiny);
}

TEST(GgufVocab, Llama3ThroughGgufEncodesLikeTokenizerJson) {
  const Tokenizer through_gguf(vocab_from_gguf(metadata_of(vocab_to_gguf(test::hf_tokenizer("llama3").vocab()))));
  for (const auto& line : test::read_golden_lines("llama3"))
    EXPECT_EQ(through_gguf.encode(line.text), line.ids) << nlohmann::json(line.text).dump();
}

TEST(GgufVocab, TinyVocabLoadsAndRoundTripsText) {
  for (const char* model : {"tiny-qwen3-F16", "tiny-qwen2-F16", "tiny-llama-F16"}) {
    SCOPED_TRACE(model);
    const Tokenizer tok = Tokenizer::from_gguf(
        gguf::File::open(shared_path("golden/models/" + std::string(model) + ".gguf")).metadata());
    ASSERT_EQ(tok.n_tokens(), 1024u);
    EXPECT_EQ(tok.bos_id(), 1021);
    EXPECT_EQ(tok.eos_id(), 1023);
    EXPECT_EQ(tok.token_type(1022), TokenType::kControl);
    EXPECT_EQ(tok.encode(" "), std::vector<int32_t>{32});  // id b is byte b
    EXPECT_EQ(tok.encode(std::string(1, '\0')), std::vector<int32_t>{0});

    const auto chat = tok.encode("<|im_start|>user\nhi<|im_end|>");
    ASSERT_GE(chat.size(), 3u);
    EXPECT_EQ(chat.front(), 1022);
    EXPECT_EQ(chat.back(), 1023);
    for (const std::string text :
         {"This program is free software: you can redistribute it and/or modify it under the terms of the GNU "
          "General Public License.",
          "  code(x) {\n\treturn 42;\n}\n", "caf\u00E9 \u65E5\u672C \U0001F680", ""}) {
      const auto ids = tok.encode(text);
      EXPECT_EQ(tok.decode(ids), text);
      if (text.size() > 40) {
        EXPECT_LT(ids.size(), text.size() / 2);  // the merges do work
      }
    }
  }
}

TEST(GgufVocab, PycoderVocabLoads) {
  const Tokenizer tok =
      Tokenizer::from_gguf(gguf::File::open(shared_path("models/pycoder/pycoder-q8_0.gguf")).metadata());
  EXPECT_EQ(tok.n_tokens(), 4096u);
  const std::string code = "def main():\n    return self.value\n";
  EXPECT_EQ(tok.decode(tok.encode(code)), code);
  EXPECT_EQ(tok.encode("<|endoftext|>"), std::vector<int32_t>{4093});
}

}  // namespace
}  // namespace nanoserve::tokenizer
