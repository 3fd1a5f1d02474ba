// Encoder behaviour beyond the goldens: long words, special-token parsing, BOS/EOS.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tokenizer/added_tokens.h"
#include "tokenizer/golden_data.h"

namespace nanoserve::tokenizer {
namespace {

using test::hf_tokenizer;

TEST(Encode, LongWordsRoundTrip) {
  for (const auto& family : test::kFamilies) {
    const Tokenizer& tok = hf_tokenizer(family);
    for (const std::string& text : {std::string(10000, ' '), std::string(20000, 'a'), std::string(5000, '\n'),
                                    std::string(3000, '7'), std::string(20000, '=') + "x"}) {
      const auto ids = tok.encode(text);
      EXPECT_EQ(tok.decode(ids), text) << family;
      if (text[0] != '7') {  // Qwen keeps every digit apart
        EXPECT_LT(ids.size(), text.size() / 3 + 2) << family;
      }
    }
  }
}

TEST(Encode, ParseSpecialOnlyControlsControlTokens) {
  const Tokenizer& tok = hf_tokenizer("qwen3");
  const std::string text = "<|im_start|>user\n<think>x</think><|im_end|>";
  const auto parsed = tok.encode(text, true);
  EXPECT_EQ(parsed.front(), 151644);
  EXPECT_EQ(parsed.back(), 151645);

  // Without parse_special, control tokens are plain text but user-defined ones still match.
  const auto plain = tok.encode(text, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 151644), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 151667), 1);  // <think>
  EXPECT_EQ(tok.decode(plain), text);
}

TEST(Encode, AddedTokensMatchLeftmostThenLongest) {
  AddedTokenMatcher matcher;
  matcher.add("ab", 1);
  matcher.add("abc", 2);
  matcher.add("b", 3);
  const auto match = [&](std::string_view text) {
    const auto m = matcher.find(text, 0);
    return m ? std::vector<size_t>{m->begin, m->length, static_cast<size_t>(m->id)} : std::vector<size_t>{};
  };
  EXPECT_EQ(match("xxabcd"), (std::vector<size_t>{2, 3, 2}));
  EXPECT_EQ(match("xxabd"), (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(match("bab"), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(match("xyz"), std::vector<size_t>{});

  const Tokenizer& tok = hf_tokenizer("llama3");
  EXPECT_EQ(tok.encode("<|reserved_special_token_10|>"), std::vector<int32_t>{128015});
  EXPECT_EQ(tok.encode("<|reserved_special_token_1|>"), std::vector<int32_t>{128003});
  EXPECT_EQ(tok.encode("<|eot_id|><|eot_id|>"), (std::vector<int32_t>{128009, 128009}));
}

TEST(Encode, BosAndEosAreExposedNotAdded) {
  const Tokenizer& llama = hf_tokenizer("llama3");
  EXPECT_EQ(llama.bos_id(), 128000);
  EXPECT_FALSE(llama.add_bos());
  EXPECT_EQ(llama.encode("hi").front(), llama.find_token("hi"));

  const Tokenizer& qwen = hf_tokenizer("qwen3");
  EXPECT_EQ(qwen.bos_id(), std::nullopt);  // Qwen's tokenizer_config.json has no bos_token
  EXPECT_EQ(qwen.eos_id(), 151645);
  EXPECT_EQ(qwen.padding_id(), 151643);
  EXPECT_EQ(qwen.find_token("<|endoftext|>"), 151643);
  EXPECT_EQ(qwen.find_token("no such token"), std::nullopt);
  EXPECT_EQ(qwen.token_piece(151643), "<|endoftext|>");
  EXPECT_EQ(qwen.token_piece(220), " ");
}

// Each thread has its own word cache, bound to one tokenizer at a time.
TEST(Encode, ThreadsAndAlternatingTokenizersGetTheGoldenIds) {
  const auto qwen_lines = test::read_golden_lines("qwen3");
  const auto llama_lines = test::read_golden_lines("llama3");
  const Tokenizer& qwen = hf_tokenizer("qwen3");
  const Tokenizer& llama = hf_tokenizer("llama3");
  std::atomic<int> mismatches{0};
  const auto work = [&](int offset) {
    for (int round = 0; round < 2; ++round)
      for (size_t i = 0; i < qwen_lines.size(); ++i) {
        const size_t line = (i + static_cast<size_t>(offset) * 97) % qwen_lines.size();
        if (qwen.encode(qwen_lines[line].text) != qwen_lines[line].ids) ++mismatches;
        if (llama.encode(llama_lines[line].text) != llama_lines[line].ids) ++mismatches;
      }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work, t);
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Encode, InvalidUtf8IsEncodedByteByByte) {
  const Tokenizer& tok = hf_tokenizer("qwen3");
  const std::string text = "ok \xFF\xC3 \xE4\xB8 end";
  EXPECT_EQ(tok.decode(tok.encode(text)), text);
}

}  // namespace
}  // namespace nanoserve::tokenizer
