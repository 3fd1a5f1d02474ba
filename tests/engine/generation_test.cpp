// Generation: what every engine does with one step's logits (logit_bias, sampling, text,
// events) and what it checks before accepting a request.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "engine/generation.h"
#include "engine/stream_reading.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kContext = 4096;  // far more than these tests' prompts and replies

TEST(LogitBias, AddsToTheNamedTokensOnly) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  add_logit_bias({{0, 5.0f}, {2, -100.0f}, {7, 1.0f}, {-1, 1.0f}}, logits);
  EXPECT_EQ(logits, (std::vector<float>{6.0f, 2.0f, -97.0f}));
}

class GenerationTest : public ::testing::Test {
 protected:
  GenerationRequest request() const {
    GenerationRequest r;
    r.prompt = tok_.encode("Hello");
    r.max_tokens = 4;
    return r;
  }
  // Logits in which `token` leads.
  std::vector<float> leading(int32_t token) const {
    std::vector<float> logits(tok_.n_tokens(), 0.0f);
    logits[token] = 5.0f;
    return logits;
  }
  const tokenizer::Tokenizer tok_ = test::tiny_tokenizer();
};

TEST_F(GenerationTest, LogitBiasIsAppliedBeforeSampling) {
  GenerationRequest r = request();
  r.logit_bias = {{'x', -100.0f}, {'y', 3.0f}};  // ban the leader; lift another above the rest
  Generation g(r, tok_, kContext);
  g.admit();
  EXPECT_EQ(g.step(leading('x')), 'y');
  r.logit_bias = {{'z', 10.0f}};  // force a token over the leader
  Generation forced(r, tok_, kContext);
  forced.admit();
  EXPECT_EQ(forced.step(leading('x')), 'z');
}

TEST_F(GenerationTest, EachTokenIsOneTextEventThenDoneWithStats) {
  Generation g(request(), tok_, kContext);
  g.admit();
  for (char c : std::string("abc")) EXPECT_EQ(g.step(leading(c)), c);
  EXPECT_FALSE(g.finished());
  EXPECT_EQ(g.step(leading('d')), std::nullopt);  // the 4th of max_tokens 4
  EXPECT_TRUE(g.finished());
  const test::StreamRecord r = test::read_to_end(*g.stream(), 0ms);
  EXPECT_EQ(r.text, "abcd");
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{'a', 'b', 'c', 'd'}));
  EXPECT_EQ(r.text_events, 4);
  ASSERT_EQ(r.last.kind, Event::Kind::Done);
  EXPECT_EQ(r.last.finish, FinishReason::Length);
  EXPECT_EQ(r.last.stats.prompt_tokens, static_cast<int32_t>(request().prompt.size()));
  EXPECT_EQ(r.last.stats.completion_tokens, 4);
  EXPECT_GE(r.last.stats.ttft_ms, r.last.stats.queue_ms);
  EXPECT_GT(r.last.stats.peak_memory_bytes, 0);
}

TEST_F(GenerationTest, EosEndsWithStopAndNoTextEventForIt) {
  Generation g(request(), tok_, kContext);
  g.admit();
  EXPECT_EQ(g.step(leading('a')), 'a');
  EXPECT_EQ(g.step(leading(test::kTinyEos)), std::nullopt);
  const test::StreamRecord r = test::read_to_end(*g.stream(), 0ms);
  EXPECT_EQ(r.text, "a");
  EXPECT_EQ(r.tokens, std::vector<int32_t>{'a'});
  EXPECT_EQ(r.last.finish, FinishReason::Stop);
  EXPECT_EQ(r.last.stats.completion_tokens, 2);
}

TEST_F(GenerationTest, FinishEarlyReleasesHeldBackTextOnce) {
  GenerationRequest req = request();
  req.stop = {"bc!"};
  Generation g(req, tok_, kContext);
  g.admit();
  g.step(leading('a'));
  g.step(leading('b'));  // held back: may start "bc!"
  g.finish(FinishReason::Cancelled);
  g.finish(FinishReason::Length);  // ignored: the request has ended
  g.fail("ignored too");
  const test::StreamRecord r = test::read_to_end(*g.stream(), 0ms);
  EXPECT_EQ(r.text, "ab");
  EXPECT_EQ(r.last.finish, FinishReason::Cancelled);
  EXPECT_FALSE(g.stream()->next(0ms));
}

TEST_F(GenerationTest, FailPushesOneErrorEvent) {
  Generation g(request(), tok_, kContext);
  g.fail("the model broke");
  const test::StreamRecord r = test::read_to_end(*g.stream(), 0ms);
  EXPECT_EQ(r.last.kind, Event::Kind::Error);
  EXPECT_EQ(r.last.error, "the model broke");
}

TEST_F(GenerationTest, TheFinalEventGivesThePlaceBackBeforeItIsSeen) {
  std::atomic<int64_t> places = 0;
  Generation g(request(), tok_, kContext);
  g.hold_place(places);
  EXPECT_EQ(places, 1);
  g.finish(FinishReason::Cancelled);
  EXPECT_EQ(places, 0);
}

TEST(ValidateRequest, RejectsRequestsThatCannotRun) {
  GenerationRequest ok;
  ok.prompt = {1, 2, 3};
  EXPECT_NO_THROW(validate_request(ok, 100, 4));
  auto rejects = [](GenerationRequest r, int64_t n_vocab, int64_t ctx) {
    EXPECT_THROW(validate_request(r, n_vocab, ctx), std::invalid_argument);
  };
  rejects({}, 100, 16);  // empty prompt
  GenerationRequest r = ok;
  r.prompt = {1, 100};
  rejects(r, 100, 16);  // token outside the vocabulary
  r.prompt = {-1};
  rejects(r, 100, 16);
  rejects(ok, 100, 3);  // no room left for a new token
  r = ok;
  r.logit_bias = {{100, 1.0f}};
  rejects(r, 100, 16);
  r = ok;
  r.max_tokens = 0;
  rejects(r, 100, 16);
}

TEST_F(GenerationTest, ATokenThatFillsTheContextEndsItWithLength) {
  GenerationRequest r = request();
  r.max_tokens = 100;
  const auto n_prompt = static_cast<int64_t>(r.prompt.size());
  Generation g(r, tok_, n_prompt + 2);  // positions for the prompt and two new tokens
  g.admit();
  EXPECT_EQ(g.step(leading('a')), 'a');
  EXPECT_EQ(g.step(leading('b')), 'b');
  EXPECT_EQ(g.step(leading('c')), std::nullopt);  // at position n_prompt + 2: no room to feed it back
  const test::StreamRecord out = test::read_to_end(*g.stream(), 0ms);
  EXPECT_EQ(out.text, "abc");
  EXPECT_EQ(out.last.finish, FinishReason::Length);
  EXPECT_EQ(out.last.stats.completion_tokens, 3);
}

}  // namespace
}  // namespace nanoserve::engine
