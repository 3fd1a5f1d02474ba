// The mock engine: what the server's tests rely on it for. Deterministic text through the
// real tokenizer and text pipeline, a per-token delay, cancel within one step, a bounded
// queue, and concurrent generations.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_factory.h"
#include "engine/mock_engine.h"
#include "engine/stream_reading.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::read_to_end;
using test::StreamRecord;

class MockEngineTest : public ::testing::Test {
 protected:
  static MockEngine make(MockOptions options = {}) { return MockEngine(test::tiny_tokenizer(), std::move(options)); }
  static GenerationRequest request(int32_t max_tokens) {
    GenerationRequest r;
    r.prompt = {'H', 'i'};
    r.max_tokens = max_tokens;
    return r;
  }
  // Waits for the stream's first event (the request has then been admitted).
  static Event first_event(Stream& s) {
    std::optional<Event> e = s.next(test::kPatience);
    if (!e) throw std::runtime_error("no first event");
    return *e;
  }
};

// MockEngine is neither copyable nor movable, so make() relies on guaranteed copy elision.
TEST_F(MockEngineTest, GreedyWritesThePassageAndStopsAtMaxTokens) {
  MockEngine engine = make();
  const auto passage_tokens = static_cast<int32_t>(engine.tokenizer().encode(kMockPassage, false).size());
  const StreamRecord one = read_to_end(*engine.submit(request(2 * passage_tokens + 5)));
  ASSERT_EQ(one.last.kind, Event::Kind::Done);
  EXPECT_EQ(one.last.finish, FinishReason::Length);
  EXPECT_EQ(one.last.stats.completion_tokens, 2 * passage_tokens + 5);
  EXPECT_EQ(one.last.stats.prompt_tokens, 2);
  const std::string twice = std::string(kMockPassage) + kMockPassage;
  EXPECT_TRUE(one.text.starts_with(twice)) << one.text;  // it cycles
  EXPECT_EQ(one.tokens.size(), static_cast<size_t>(2 * passage_tokens + 5));

  const StreamRecord again = read_to_end(*engine.submit(request(2 * passage_tokens + 5)));
  EXPECT_EQ(again.text, one.text);
  EXPECT_EQ(again.tokens, one.tokens);
}

// --mock-passage: a test makes the server answer with text of its choosing (markup, say).
TEST_F(MockEngineTest, APassageOfItsOwnIsWrittenInstead) {
  const std::string passage = "<script>alert(1)</script> **bold** \xe2\x80\x94 end.";
  MockEngine engine = make({.passage = passage});
  const auto tokens = static_cast<int32_t>(engine.tokenizer().encode(passage, false).size());
  EXPECT_EQ(read_to_end(*engine.submit(request(tokens))).text, passage);
  EXPECT_THROW(make({.passage = ""}), std::invalid_argument);
}

// --mock-echo: each request is answered with its own prompt, so a test reads what reached the model.
TEST_F(MockEngineTest, EchoAnswersEachRequestWithItsOwnPrompt) {
  MockEngine engine = make({.echo_prompt = true});
  // Once, then it stops; control tokens are written out as text (a turn's end ends nothing).
  for (const std::string text : {"Tool result: 18 C in Paris.", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"}) {
    GenerationRequest r = request(1000);
    r.prompt = engine.tokenizer().encode(text);
    const StreamRecord out = read_to_end(*engine.submit(r));
    EXPECT_EQ(out.text, text);
    EXPECT_EQ(out.last.finish, FinishReason::Stop);
  }
  const std::string m = test::tiny_model_path();
  EXPECT_THROW(check_engine_options({.kind = "batch", .model_path = m, .mock_echo = true}), std::invalid_argument);
  EXPECT_THROW(check_engine_options({.kind = "mock", .model_path = m, .mock_passage = "hi", .mock_echo = true}),
               std::invalid_argument);
}

TEST_F(MockEngineTest, ThePassageOptionIsTheMockEnginesOnly) {
  const std::string m = test::tiny_model_path();
  try {
    check_engine_options({.kind = "batch", .model_path = m, .mock_passage = "hi"});
    ADD_FAILURE() << "accepted --mock-passage with the batch engine";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--mock-passage"), std::string::npos) << e.what();
  }
  const std::unique_ptr<Engine> engine = make_engine({.kind = "mock", .model_path = m, .mock_passage = "Hi there."});
  const auto tokens = static_cast<int32_t>(engine->tokenizer().encode("Hi there.", false).size());
  EXPECT_EQ(read_to_end(*engine->submit(request(tokens))).text, "Hi there.");
}

TEST_F(MockEngineTest, SampledTextIsDeterministicPerSeed) {
  MockEngine engine = make();
  auto sampled = [&](uint64_t seed) {
    GenerationRequest r = request(300);
    r.sampling = {.temperature = 1.0f, .seed = seed};
    return read_to_end(*engine.submit(r)).tokens;
  };
  const std::vector<int32_t> a = sampled(7);
  EXPECT_EQ(sampled(7), a);
  EXPECT_NE(sampled(8), a);
  EXPECT_NE(a, read_to_end(*engine.submit(request(300))).tokens);  // not the greedy passage
}

TEST_F(MockEngineTest, StopStringsAndMultiByteTextWorkAsWithAModel) {
  MockEngine engine = make();
  GenerationRequest r = request(1000);
  r.stop = {"gulls"};
  const StreamRecord gulls = read_to_end(*engine.submit(r));
  EXPECT_EQ(gulls.last.finish, FinishReason::Stop);
  const std::string passage = kMockPassage;
  EXPECT_EQ(gulls.text, passage.substr(0, passage.find("gulls")));

  r.stop = {"🌊"};  // several byte tokens in this vocabulary
  const StreamRecord wave = read_to_end(*engine.submit(r));
  EXPECT_EQ(wave.text, passage.substr(0, passage.find("🌊")));
  EXPECT_NE(wave.text.find("\xe2\x80\x94"), std::string::npos);  // the em dash came out whole
}

TEST_F(MockEngineTest, LogitBiasCanForceEosOrBanAToken) {
  MockEngine engine = make();
  GenerationRequest r = request(50);
  r.logit_bias = {{test::kTinyEos, 100.0f}};
  const StreamRecord eos = read_to_end(*engine.submit(r));
  EXPECT_EQ(eos.last.finish, FinishReason::Stop);
  EXPECT_EQ(eos.text, "");
  EXPECT_EQ(eos.last.stats.completion_tokens, 1);

  r.ignore_eos = true;
  r.max_tokens = 3;
  const StreamRecord ignored = read_to_end(*engine.submit(r));
  EXPECT_EQ(ignored.last.finish, FinishReason::Length);
  EXPECT_EQ(ignored.tokens, std::vector<int32_t>(3, test::kTinyEos));

  const int32_t first = engine.tokenizer().encode(kMockPassage, false).front();
  r = request(1);
  r.logit_bias = {{first, -100.0f}};
  const StreamRecord banned = read_to_end(*engine.submit(r));
  ASSERT_EQ(banned.tokens.size(), 1u);
  EXPECT_NE(banned.tokens[0], first);
}

TEST_F(MockEngineTest, EachTokenTakesAtLeastTheDelay) {
  MockEngine engine = make({.token_delay_us = 20'000});
  const auto start = Clock::now();
  const StreamRecord r = read_to_end(*engine.submit(request(5)));
  EXPECT_GE(Clock::now() - start, 100ms);
  EXPECT_GE(r.last.stats.ttft_ms, 20.0);
  EXPECT_GT(r.last.stats.decode_tok_s, 0.0);
  EXPECT_LE(r.last.stats.decode_tok_s, 50.0);  // 4 gaps of at least 20 ms
}

// A cancel ends the step in progress: with a step longer than any test, the request ends at
// once (read_to_end would give up otherwise) and without its token.
TEST_F(MockEngineTest, CancelEndsTheStepInProgress) {
  MockEngine engine = make({.token_delay_us = 3'600'000'000});
  auto stream = engine.submit(request(100000));
  for (const auto give_up = Clock::now() + test::kPatience; engine.metrics().running != 1;) {
    ASSERT_LT(Clock::now(), give_up) << "the request was never admitted";
    std::this_thread::sleep_for(1ms);
  }
  stream->cancel();
  const StreamRecord rest = read_to_end(*stream);
  EXPECT_EQ(rest.text_events, 0);
  ASSERT_EQ(rest.last.kind, Event::Kind::Done);
  EXPECT_EQ(rest.last.finish, FinishReason::Cancelled);
  EXPECT_EQ(rest.last.stats.completion_tokens, 0);
}

TEST_F(MockEngineTest, FullQueueThrowsQueueFullAndCancelledWaitersGiveTheirPlaceBack) {
  MockEngine engine = make({.token_delay_us = 10'000, .max_concurrency = 1, .queue_limit = 1});
  auto running = engine.submit(request(100000));
  first_event(*running);
  auto waiting = engine.submit(request(5));
  EngineMetrics m = engine.metrics();
  EXPECT_EQ(m.running, 1);
  EXPECT_EQ(m.waiting, 1);
  EXPECT_THROW(engine.submit(request(5)), QueueFull);

  waiting->cancel();
  EXPECT_EQ(engine.metrics().waiting, 0);
  auto next = engine.submit(request(5));  // the cancelled one's place
  running->cancel();
  EXPECT_EQ(read_to_end(*running).last.finish, FinishReason::Cancelled);
  const StreamRecord served = read_to_end(*next);
  EXPECT_EQ(served.last.finish, FinishReason::Length);
  EXPECT_GT(served.last.stats.queue_ms, 0.0);
  EXPECT_EQ(read_to_end(*waiting).last.finish, FinishReason::Cancelled);
}

// A reader that has seen its final event can submit again at once, even with no queue.
TEST_F(MockEngineTest, AFinishedRequestFreesItsSlotBeforeItsFinalEvent) {
  MockEngine engine = make({.max_concurrency = 1, .queue_limit = 0});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(read_to_end(*engine.submit(request(2))).last.finish, FinishReason::Length);
}

TEST_F(MockEngineTest, RequestsUpToMaxConcurrencyRunTogether) {
  MockEngine engine = make({.token_delay_us = 5'000, .max_concurrency = 2, .queue_limit = 0});
  auto a = engine.submit(request(100000));
  auto b = engine.submit(request(100000));  // no queue: accepted only because a slot is free
  first_event(*a);
  first_event(*b);
  EXPECT_EQ(engine.metrics().running, 2);
  EXPECT_THROW(engine.submit(request(1)), QueueFull);
  a->cancel();
  b->cancel();
  EXPECT_EQ(read_to_end(*a).last.finish, FinishReason::Cancelled);
  EXPECT_EQ(read_to_end(*b).last.finish, FinishReason::Cancelled);
}

TEST_F(MockEngineTest, DestroyingTheEngineEndsEveryStream) {
  std::shared_ptr<Stream> running, waiting;
  {
    MockEngine engine = make({.token_delay_us = 10'000, .max_concurrency = 1});
    running = engine.submit(request(100000));
    first_event(*running);
    waiting = engine.submit(request(5));
  }
  EXPECT_EQ(read_to_end(*running, 0ms).last.finish, FinishReason::Cancelled);
  EXPECT_EQ(read_to_end(*waiting, 0ms).last.finish, FinishReason::Cancelled);
}

TEST_F(MockEngineTest, RejectsRequestsThatCannotRun) {
  MockEngine engine = make({.context_size = 8});
  EXPECT_THROW(engine.submit(request(0)), std::invalid_argument);
  GenerationRequest r = request(5);
  r.prompt.assign(8, 'a');
  EXPECT_THROW(engine.submit(r), std::invalid_argument);
  r.prompt.assign(6, 'a');  // 6 + 5 > 8: generation ends at the context's end
  const StreamRecord rec = read_to_end(*engine.submit(r));
  EXPECT_EQ(rec.last.finish, FinishReason::Length);
  EXPECT_EQ(rec.last.stats.completion_tokens, 3);
}

TEST(EngineFactory, MakesAMockFromAModelFilesTokenizerAndMetadata) {
  const auto engine = make_engine({.kind = "mock", .model_path = test::tiny_model_path()});
  EXPECT_EQ(engine->model_name(), "tiny-qwen3-rand");
  EXPECT_NE(engine->chat_template().find("<|im_start|>"), std::string::npos);
  EXPECT_EQ(engine->context_size(), 4096);
  EXPECT_EQ(engine->tokenizer().n_tokens(), 1024u);
  GenerationRequest r;
  r.prompt = {'a'};
  r.max_tokens = 4;
  EXPECT_EQ(read_to_end(*engine->submit(r)).last.finish, FinishReason::Length);
}

TEST(EngineFactory, UnknownKindIsAnInvalidArgument) {
  EXPECT_THROW(make_engine({.kind = "speculative", .model_path = test::tiny_model_path()}), std::invalid_argument);
}

}  // namespace
}  // namespace nanoserve::engine
