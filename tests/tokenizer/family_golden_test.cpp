// The tokenizer.json files of the families whose goldens this repository made (tests/tokenizer/data,
// by scripts/make-tokenizer-goldens.mjs with Hugging Face's own tokenizers) give Hugging Face's
// ids and decodes on every golden line: the SentencePiece-style Gemma 3 and Mistral 7B (BPE with
// byte_fallback) and the o200k ones of gpt-oss and GPT-4o (byte-level, split at case changes).
// So do the GGUF vocabularies written from them (SentencePiece: merges from scores, as
// llama.cpp's; o200k: tokenizer.ggml.pre "gpt-4o").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gguf/file.h"
#include "tokenizer/golden_data.h"
#include "tokenizer/vocab_gguf.h"
#include "tokenizer/vocab_hf.h"

namespace nanoserve::tokenizer {
namespace {

void expect_golden(const Tokenizer& tok, const std::string& family, const std::string& path) {
  const auto lines = test::read_repo_golden_lines(family);
  size_t ids_match = 0, decode_match = 0;
  for (const auto& line : lines) {
    const auto ids = tok.encode(line.text);
    if (ids == line.ids) ++ids_match;
    else ADD_FAILURE() << path << " [" << line.category << "] " << nlohmann::json(line.text).dump() << ": ids "
                       << testing::PrintToString(ids) << " expected " << testing::PrintToString(line.ids);
    const std::string decoded = tok.decode(line.ids);
    if (decoded == line.decoded) ++decode_match;
    else ADD_FAILURE() << path << " [" << line.category << "] " << nlohmann::json(line.text).dump() << ": decoded "
                       << nlohmann::json(decoded).dump();
  }
  std::cout << family << " (" << path << "): ids " << ids_match << "/" << lines.size() << ", decode " << decode_match
            << "/" << lines.size() << "\n";
  EXPECT_GE(lines.size(), 370u);
}

bool is_sentencepiece(const std::string& family) { return family == "gemma3" || family == "mistral"; }

class Family : public ::testing::TestWithParam<std::string> {};

TEST_P(Family, TokenizerJsonGivesHuggingFacesIds) {
  const Tokenizer& tok = test::npm_tokenizer(GetParam());
  EXPECT_EQ(tok.vocab().kind, is_sentencepiece(GetParam()) ? VocabKind::kSentencePiece : VocabKind::kByteLevel);
  if (!is_sentencepiece(GetParam())) {
    EXPECT_EQ(tok.vocab().pre_split, PreSplit::kO200k);
  }
  expect_golden(tok, GetParam(), "tokenizer.json");
}

TEST_P(Family, GgufVocabularyWrittenFromItGivesTheSameIds) {
  const Vocab written = test::npm_tokenizer(GetParam()).vocab();
  gguf::Metadata metadata;
  for (const auto& [key, value] : vocab_to_gguf(written)) metadata.add(key, value);
  const Tokenizer tok = Tokenizer::from_gguf(metadata);
  if (is_sentencepiece(GetParam())) {
    EXPECT_EQ(metadata.get_string("tokenizer.ggml.model"), "llama");
    EXPECT_TRUE(tok.vocab().merges.empty());  // ranked by the scores alone
    EXPECT_EQ(tok.vocab().add_space_prefix, written.add_space_prefix);
  } else {
    EXPECT_EQ(metadata.get_string("tokenizer.ggml.pre"), "gpt-4o");
  }
  EXPECT_EQ(tok.bos_id(), written.bos_id);
  expect_golden(tok, GetParam(), "GGUF");
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, Family, ::testing::Values("gemma3", "mistral", "gptoss", "gpt4o"));

TEST(Family, SentencePieceSpecialTokensAndPrefixes) {
  const Tokenizer& gemma = test::npm_tokenizer("gemma3");
  EXPECT_EQ(gemma.bos_id(), 2);
  EXPECT_EQ(gemma.eos_id(), gemma.find_token("<end_of_turn>"));
  EXPECT_TRUE(gemma.add_bos());
  EXPECT_FALSE(gemma.strips_leading_space());
  EXPECT_EQ(gemma.token_type(*gemma.find_token("<start_of_turn>")), TokenType::kControl);
  const Tokenizer& mistral = test::npm_tokenizer("mistral");
  EXPECT_EQ(mistral.bos_id(), 1);
  EXPECT_EQ(mistral.eos_id(), 2);
  EXPECT_EQ(mistral.find_token("\xE2\x96\x81"), 28705);  // the package's vocabulary is Mistral 7B's
  EXPECT_TRUE(mistral.strips_leading_space());
  EXPECT_EQ(mistral.vocab().unknown_id, 0);
}

}  // namespace
}  // namespace nanoserve::tokenizer
