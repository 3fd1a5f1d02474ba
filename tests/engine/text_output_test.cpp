// TextOutput: token ids in, the text a client sees out: whole UTF-8 characters, stop strings
// cut (even across tokens), and the end of generation (eos, control tokens, max_tokens).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/stream_reading.h"
#include "engine/text_output.h"

namespace nanoserve::engine {
namespace {

using test::kTinyEndOfText;
using test::kTinyEos;

class TextOutputTest : public ::testing::Test {
 protected:
  struct Output {
    std::vector<std::string> pieces;  // per token
    std::string text;                 // all of it, what drain() released at the end included
    std::optional<FinishReason> finish;
    bool last_token_is_text = true;
    int32_t completion_tokens = 0;
  };

  // Pushes tokens until generation ends (or the tokens run out: then drains, like a cancel).
  Output run(const GenerationRequest& request, const std::vector<int32_t>& tokens) {
    TextOutput out(tok_, request);
    Output o;
    for (int32_t t : tokens) {
      TextOutput::Step step = out.push(t);
      o.pieces.push_back(step.text);
      o.text += step.text;
      o.last_token_is_text = step.token_is_text;
      if ((o.finish = step.finish)) break;
    }
    if (!o.finish) o.text += out.drain();
    o.completion_tokens = out.completion_tokens();
    return o;
  }

  // In the tiny vocabulary, id b is the single byte b.
  static std::vector<int32_t> bytes(std::string_view s) {
    std::vector<int32_t> ids;
    for (unsigned char c : s) ids.push_back(c);
    return ids;
  }

  static GenerationRequest request(std::vector<std::string> stop, int32_t max_tokens = 1000) {
    GenerationRequest r;
    r.stop = std::move(stop);
    r.max_tokens = max_tokens;
    return r;
  }

  const tokenizer::Tokenizer tok_ = test::tiny_tokenizer();
};

TEST_F(TextOutputTest, MultiByteCharacterSplitAcrossTokensComesOutWhole) {
  const Output o = run(request({}), bytes("a🌊b"));
  EXPECT_EQ(o.pieces, (std::vector<std::string>{"a", "", "", "", "🌊", "b"}));
  EXPECT_EQ(o.text, "a🌊b");
  EXPECT_FALSE(o.finish);
}

TEST_F(TextOutputTest, StopStringSplitAcrossTokens) {
  const Output o = run(request({"STOP"}), bytes("say STOP now"));
  EXPECT_EQ(o.text, "say ");
  EXPECT_EQ(o.finish, FinishReason::Stop);
  EXPECT_EQ(o.completion_tokens, 8);  // generation ended at the P
  EXPECT_EQ(o.pieces.back(), "");
}

TEST_F(TextOutputTest, StopStringOverRealMergedTokens) {
  const std::vector<int32_t> ids = tok_.encode("Hello world. Goodbye world.");
  ASSERT_LT(ids.size(), 27u);  // merged tokens, not bytes
  const Output o = run(request({". G", "bye"}), ids);
  EXPECT_EQ(o.text, "Hello world");
  EXPECT_EQ(o.finish, FinishReason::Stop);
}

TEST_F(TextOutputTest, PartialStopIsReleasedIntactWhenItTurnsOutNotToBeOne) {
  const Output o = run(request({"STOP"}), bytes("say STOrm"));
  EXPECT_EQ(o.pieces, (std::vector<std::string>{"s", "a", "y", " ", "", "", "", "STOr", "m"}));
  EXPECT_FALSE(o.finish);
  EXPECT_EQ(o.text, "say STOrm");
}

TEST_F(TextOutputTest, MultiByteStopString) {
  EXPECT_EQ(run(request({"🌊"}), bytes("sea 🌊 waves")).text, "sea ");
  EXPECT_EQ(run(request({"é"}), bytes("café")).text, "caf");
  EXPECT_EQ(run(request({"éa"}), bytes("café au lait")).text, "café au lait");
}

TEST_F(TextOutputTest, SeveralStopsTheFirstInTheTextWins) {
  const Output o = run(request({"lait", "au"}), bytes("café au lait"));
  EXPECT_EQ(o.text, "café ");
  EXPECT_EQ(o.finish, FinishReason::Stop);
}

TEST_F(TextOutputTest, StopAtTheVeryStart) {
  const Output o = run(request({"Hi"}), bytes("Hi there"));
  EXPECT_EQ(o.text, "");
  EXPECT_EQ(o.finish, FinishReason::Stop);
  EXPECT_EQ(o.completion_tokens, 2);
}

TEST_F(TextOutputTest, EosEndsGenerationAndReleasesHeldBackText) {
  std::vector<int32_t> ids = bytes("ok ST");
  ids.push_back(kTinyEos);
  ids.push_back('x');
  const Output o = run(request({"STOP"}), ids);
  EXPECT_EQ(o.finish, FinishReason::Stop);
  EXPECT_FALSE(o.last_token_is_text);
  EXPECT_EQ(o.pieces.back(), "ST");  // the eos token itself writes nothing
  EXPECT_EQ(o.text, "ok ST");
  EXPECT_EQ(o.completion_tokens, 6);  // the eos counts as generated
}

TEST_F(TextOutputTest, AnyControlTokenEndsGeneration) {
  const Output o = run(request({}), {'a', kTinyEndOfText, 'b'});
  EXPECT_EQ(o.text, "a");
  EXPECT_EQ(o.finish, FinishReason::Stop);
}

TEST_F(TextOutputTest, IgnoreEosKeepsGoingAndWritesTheTokensText) {
  GenerationRequest r = request({});
  r.ignore_eos = true;
  r.max_tokens = 3;
  const Output o = run(r, {'a', kTinyEos, 'b', 'c'});
  EXPECT_EQ(o.text, "a<|im_end|>b");
  EXPECT_EQ(o.finish, FinishReason::Length);
}

TEST_F(TextOutputTest, MaxTokensEndsWithLengthAndReleasesHeldBackText) {
  const Output o = run(request({"lo!"}, 4), bytes("hello"));
  EXPECT_EQ(o.finish, FinishReason::Length);
  EXPECT_EQ(o.completion_tokens, 4);
  EXPECT_EQ(o.pieces, (std::vector<std::string>{"h", "e", "", "ll"}));
  EXPECT_EQ(o.text, "hell");
}

TEST_F(TextOutputTest, AnUnfinishedCharacterAtTheEndBecomesTheReplacementCharacter) {
  const Output o = run(request({}, 3), bytes("a🌊"));
  EXPECT_EQ(o.finish, FinishReason::Length);
  EXPECT_EQ(o.text, "a\xEF\xBF\xBD");  // U+FFFD
}

TEST_F(TextOutputTest, DrainReleasesWhatIsHeldBack) {
  const Output o = run(request({"STOP"}), bytes("go ST"));  // runs out: drained like a cancel
  EXPECT_FALSE(o.finish);
  EXPECT_EQ(o.text, "go ST");
}

}  // namespace
}  // namespace nanoserve::engine
