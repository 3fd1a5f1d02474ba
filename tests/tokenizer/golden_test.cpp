// Exactness against Hugging Face: every golden line of every family, and llama.cpp's own
// tokenizer test vectors.
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "tokenizer/golden_data.h"

namespace nanoserve::tokenizer {
namespace {

using test::hf_tokenizer;

std::string describe(const test::GoldenLine& line) {
  return "[" + line.category + "] " + nlohmann::json(line.text).dump();
}

class GoldenFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenFamily, EveryLineEncodesAndDecodesExactly) {
  const Tokenizer& tok = hf_tokenizer(GetParam());
  const auto lines = test::read_golden_lines(GetParam());
  size_t ids_match = 0, decode_match = 0;
  for (const auto& line : lines) {
    const auto ids = tok.encode(line.text);
    if (ids == line.ids) ++ids_match;
    else ADD_FAILURE() << describe(line) << ": ids " << testing::PrintToString(ids) << " expected "
                       << testing::PrintToString(line.ids);
    const std::string decoded = tok.decode(line.ids);
    if (decoded == line.decoded) ++decode_match;
    else ADD_FAILURE() << describe(line) << ": decoded " << nlohmann::json(decoded).dump();
  }
  std::cout << GetParam() << ".jsonl: ids " << ids_match << "/" << lines.size() << ", decode " << decode_match
            << "/" << lines.size() << "\n";
  RecordProperty("ids_match", static_cast<int>(ids_match));
  EXPECT_EQ(lines.size(), 368u);
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, GoldenFamily, ::testing::ValuesIn(test::kFamilies));

struct LlamaCppCase {
  std::string vectors;  // ggml-vocab-<vectors>.gguf.{inp,out}
  std::string family;   // tokenizer.json that must give the same ids
  friend void PrintTo(const LlamaCppCase& c, std::ostream* os) { *os << c.vectors << " with " << c.family; }
};

class LlamaCppVectors : public ::testing::TestWithParam<LlamaCppCase> {};

TEST_P(LlamaCppVectors, MatchTokenizerJson) {
  const Tokenizer& tok = hf_tokenizer(GetParam().family);
  const auto vectors = test::read_llamacpp_vectors(GetParam().vectors);
  ASSERT_EQ(vectors.size(), 46u);
  EXPECT_EQ(vectors[0].text, "ied 4 \u00BD months");
  EXPECT_EQ(vectors[2].text, "");
  size_t matches = 0;
  for (const auto& v : vectors) {
    const auto ids = tok.encode(v.text);
    if (ids == v.ids) ++matches;
    else ADD_FAILURE() << nlohmann::json(v.text).dump() << ": ids " << testing::PrintToString(ids) << " expected "
                       << testing::PrintToString(v.ids);
  }
  std::cout << "ggml-vocab-" << GetParam().vectors << " with " << GetParam().family << ": " << matches << "/"
            << vectors.size() << "\n";
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, LlamaCppVectors,
                         ::testing::Values(LlamaCppCase{"qwen2", "qwen3"}, LlamaCppCase{"qwen2", "qwen2_5"},
                                           LlamaCppCase{"llama-bpe", "llama3"}),
                         [](const auto& info) {
                           std::string name = info.param.vectors + "_" + info.param.family;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace nanoserve::tokenizer
