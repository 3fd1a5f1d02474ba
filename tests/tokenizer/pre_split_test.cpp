// The hand-written pre-split against the regex itself (PCRE2), on every golden text and on
// random Unicode strings built from the characters the regex treats specially.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "tokenizer/golden_data.h"
#include "tokenizer/pcre2_splitter.h"
#include "tokenizer/pre_split.h"
#include "utf8/utf8.h"

namespace nanoserve::tokenizer {
namespace {

const PreSplit kKinds[] = {PreSplit::kQwen2, PreSplit::kLlama3, PreSplit::kGpt2, PreSplit::kO200k};

std::vector<std::string_view> hand_split(PreSplit kind, std::string_view text) {
  std::vector<std::string_view> words;
  split_words(kind, text, words);
  return words;
}

void expect_same_split(PreSplit kind, const Pcre2Splitter& reference, const std::string& text) {
  const auto expected = reference.split(text);
  const auto actual = hand_split(kind, text);
  EXPECT_EQ(actual, expected) << "kind " << static_cast<int>(kind) << " text " << nlohmann::json(text).dump();
}

TEST(PreSplit, SplitsLikeTheRegexOnEveryGoldenText) {
  for (const PreSplit kind : kKinds) {
    const Pcre2Splitter reference(hf_regex(kind));
    size_t texts = 0;
    for (const auto& family : test::kFamilies)
      for (const auto& line : test::read_golden_lines(family)) expect_same_split(kind, reference, line.text), ++texts;
    for (const char* vectors : {"qwen2", "llama-bpe"})
      for (const auto& v : test::read_llamacpp_vectors(vectors)) expect_same_split(kind, reference, v.text), ++texts;
    EXPECT_EQ(texts, 3u * 368 + 2 * 46);
  }
}

// Characters that exercise every branch: each regex class, the whitespace that is not
// ASCII (NBSP, NEL, line separator, ideographic space), BOM (not whitespace), U+180E
// (whitespace to PCRE2 but not to Oniguruma), long s (folds to 's' in full Unicode case
// folding), numbers of other scripts, combining marks and astral characters.
const char32_t kInterestingCharacters[] = {
    'a', 'Z', 's', 'S', 't', 'r', 'e', 'v', 'm', 'l', 'L', 'd', 'D', 'E', '0', '7', ' ', ' ', ' ', '\t', '\n', '\r',
    '\v', '\f', '\'', '\'', '"', '.', ',', '!', '-', '_', '(', '{', 0x00, 0x1F, 0x7F, 0xA0, 0x85, 0x2028, 0x2029,
    0x3000, 0x1680, 0x202F, 0xFEFF, 0x180E, 0x17F, 0xE9, 0x301, 0x5E5, 0x627, 0x665, 0xBD, 0x2167, 0x4E2D, 0x3042,
    0xAC00, 0x1100, 0x1F600, 0x1F3FD, 0x200D, 0x10FFFF, 0xFFFF, 0x1D7D8, 0x10330,
    // o200k's classes: uppercase and title case beyond ASCII, modifier letters, spacing and
    // enclosing marks, Devanagari and Thai letters with their vowel signs, '/'.
    0xC9, 0x391, 0x3B1, 0x1C5, 0x2B0, 0x915, 0x93F, 0x903, 0x20DD, 0xE01, 0xE31, 0xE48, '/'};

std::string random_text(std::mt19937& rng) {
  std::uniform_int_distribution<int> length(0, 24), coin(0, 3);
  std::uniform_int_distribution<size_t> pick(0, std::size(kInterestingCharacters) - 1);
  std::uniform_int_distribution<uint32_t> any(0, 0x10FFFF);
  std::string text;
  for (int i = length(rng); i > 0; --i) {
    char32_t cp = coin(rng) == 0 ? any(rng) : kInterestingCharacters[pick(rng)];
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';  // surrogates are not characters
    utf8::append(text, cp);
  }
  return text;
}

TEST(PreSplit, SplitsLikeTheRegexOnRandomUnicode) {
  std::mt19937 rng(20241129);
  for (const PreSplit kind : kKinds) {
    const Pcre2Splitter reference(hf_regex(kind));
    for (int i = 0; i < 20000; ++i) expect_same_split(kind, reference, random_text(rng));
  }
}

TEST(PreSplit, KnownSplits) {
  using Words = std::vector<std::string_view>;
  // o200k: a word ends where lowercase turns to uppercase; contractions stay on their word.
  EXPECT_EQ(hand_split(PreSplit::kO200k, "HelloWorld HELLOworld"), (Words{"Hello", "World", " HELLOworld"}));
  EXPECT_EQ(hand_split(PreSplit::kO200k, "I'm x=12345/\n"), (Words{"I'm", " x", "=", "123", "45", "/\n"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "I'll  go\n\n  now"), (Words{"I", "'ll", " ", " go", "\n\n", " ", " now"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "x = 12345;"), (Words{"x", " =", " ", "1", "2", "3", "4", "5", ";"}));
  EXPECT_EQ(hand_split(PreSplit::kLlama3, "x = 12345;"), (Words{"x", " =", " ", "123", "45", ";"}));
  EXPECT_EQ(hand_split(PreSplit::kGpt2, "x = 12345;"), (Words{"x", " =", " 12345", ";"}));
  EXPECT_EQ(hand_split(PreSplit::kGpt2, "THEY'RE they're"), (Words{"THEY", "'", "RE", " they", "'re"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "THEY'RE 'ſ"), (Words{"THEY", "'RE", " '", "ſ"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "end   "), (Words{"end", "   "}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "a\r\n\tb"), (Words{"a", "\r\n", "\tb"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "))\n\n"), (Words{"))\n\n"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, ""), (Words{}));
}

TEST(PreSplit, InvalidUtf8BytesAreSymbols) {
  using Words = std::vector<std::string_view>;
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "a\xFF\xFE b"), (Words{"a", "\xFF\xFE", " b"}));
  EXPECT_EQ(hand_split(PreSplit::kQwen2, "\xE4\xB8"), (Words{"\xE4\xB8"}));
}

TEST(PreSplit, Pcre2PatternTranslation) {
  EXPECT_EQ(pcre2_pattern_from_hf(R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|\s+(?!\S)|[^\s\p{L}])"),
            R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[\t-\r\x{85}\p{Z}]+(?![^\t-\r\x{85}\p{Z}])|)"
            R"([^\t-\r\x{85}\p{Z}\p{L}])");
  EXPECT_THROW(Pcre2Splitter("(unclosed"), std::runtime_error);
}

TEST(PreSplit, NamesAndPatterns) {
  EXPECT_EQ(pre_split_from_gguf_name("qwen2"), PreSplit::kQwen2);
  EXPECT_EQ(pre_split_from_gguf_name("deepseek-r1-qwen"), PreSplit::kQwen2);
  EXPECT_EQ(pre_split_from_gguf_name("llama-bpe"), PreSplit::kLlama3);
  EXPECT_EQ(pre_split_from_gguf_name("llama3"), PreSplit::kLlama3);
  EXPECT_EQ(gguf_pre_name(PreSplit::kLlama3), "llama-bpe");
  EXPECT_EQ(pre_split_from_gguf_name("default"), PreSplit::kGpt2);
  EXPECT_EQ(pre_split_from_gguf_name("gpt-2"), PreSplit::kGpt2);  // GPT-2's own files (llama.cpp's converter)
  EXPECT_EQ(pre_split_from_gguf_name("gpt-4o"), PreSplit::kO200k);  // gpt-oss, Phi-4-mini
  EXPECT_EQ(pre_split_from_gguf_name("llama4"), PreSplit::kO200k);
  EXPECT_EQ(gguf_pre_name(PreSplit::kO200k), "gpt-4o");
  EXPECT_THROW(pre_split_from_gguf_name("deepseek-llm"), std::runtime_error);  // another regex: said, not guessed
  EXPECT_EQ(gguf_pre_name(PreSplit::kGpt2), "default");
  for (const PreSplit kind : kKinds) EXPECT_EQ(pre_split_from_hf_regex(hf_regex(kind)), kind);
}

}  // namespace
}  // namespace nanoserve::tokenizer
