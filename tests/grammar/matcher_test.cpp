#include "grammar/matcher.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "grammar/grammar_matching.h"

namespace nanoserve::grammar {
namespace {

// A vocabulary of every 1-byte token and a few hundred random multi-byte ones from JSON's
// alphabet and two non-ASCII characters (whole or cut), with id 0 an end token (no bytes).
std::shared_ptr<const Vocabulary> test_vocabulary() {
  std::vector<std::string> bytes(1);
  for (int b = 1; b < 256; ++b) bytes.push_back(std::string(1, static_cast<char>(b)));
  const std::vector<std::string> alphabet = {"{", "}", "[", "]", "\"", ":", ",", " ", "\n", "0", "1", "2", "3", "4",
                                              "5", "6", "7", "8", "9", ".", "-", "e", "a", "b", "c", "x", "y", "z",
                                              "\\", "\xC3\xA9", "\xE4\xB8\xAD", "\xC3", "\xE4\xB8"};
  std::mt19937 rng(7);
  for (int i = 0; i < 1500; ++i) {
    std::string t;
    const int n = 2 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) t += alphabet[rng() % alphabet.size()];
    bytes.push_back(t);
  }
  bytes.push_back("ab");  // two tokens with the same bytes
  bytes.push_back("ab");
  return std::make_shared<const Vocabulary>(bytes, std::vector<int32_t>{0});
}

bool allowed(const std::vector<uint64_t>& bits, size_t token) { return (bits[token / 64] >> (token % 64)) & 1; }

TEST(Matcher, TheMaskIsEveryTokenTheGrammarCanReadNext) {
  const auto vocabulary = test_vocabulary();
  const auto g = schema_grammar(R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},
                                    "b":{"type":"string","maxLength":4},"c":{"type":"string"},
                                    "d":{"type":"string","pattern":"^[a-c]+\\d$"}},"required":["a","b","c","d"]})");
  Matcher m(g, vocabulary);
  std::string text;
  const std::string target = "{\"a\":[1,23,-4],\"b\":\"x\xC3\xA9z\",\"c\":\"e\xE4\xB8\xAD\\\"9\",\"d\":\"ab7\"}";
  // Step through the target a byte-token at a time; at each place check every token's bit
  // against a matcher that tries it alone: a copy of one that has read the text so far and
  // never computed a mask.
  for (size_t i = 0; i <= target.size(); ++i) {
    const std::vector<uint64_t> bits = m.allowed();
    Matcher here(g, vocabulary);
    ASSERT_TRUE(here.accept_bytes(text));
    for (size_t t = 1; t < vocabulary->n_tokens(); ++t) {
      Matcher probe = here;
      EXPECT_EQ(allowed(bits, t), probe.accept_bytes(vocabulary->bytes(static_cast<int32_t>(t)))) << "after '" << text << "' token " << t;
    }
    EXPECT_EQ(allowed(bits, 0), i == target.size()) << "the end token after '" << text << "'";
    if (i == target.size()) break;
    ASSERT_TRUE(m.accept(static_cast<uint8_t>(target[i])));  // token b is byte b
    text += target[i];
  }
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.accept(0));
}

TEST(Matcher, MaskSetsTheRestToMinusInfinity) {
  const auto vocabulary = test_vocabulary();
  Matcher m(schema_grammar(R"({"enum":["yes","no"]})"), vocabulary);
  std::vector<float> logits(vocabulary->n_tokens() + 10, 1.0f);
  const size_t n = m.mask(logits);
  EXPECT_EQ(n, 1u);  // only the token '"'
  for (size_t t = 0; t < logits.size(); ++t) EXPECT_EQ(std::isinf(logits[t]), t != '"') << t;
  EXPECT_FALSE(m.accept('y'));
  EXPECT_TRUE(m.accept('"'));
  EXPECT_EQ(m.masks_computed(), 1u);
  m.allowed();
  m.allowed();
  EXPECT_EQ(m.masks_computed(), 2u);  // one walk per place, remembered
}

}  // namespace
}  // namespace nanoserve::grammar
