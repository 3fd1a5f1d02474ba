// Relaying an engine stream: text in order, held-back pieces skipped, and the stream
// cancelled as soon as the client is gone.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "server/generation_relay.h"

namespace nanoserve::server {
namespace {

engine::Event text_event(std::string text) {
  engine::Event e;
  e.text = std::move(text);
  return e;
}

engine::Event done_event(engine::FinishReason finish, int32_t prompt, int32_t completion) {
  engine::Event e;
  e.kind = engine::Event::Kind::Done;
  e.finish = finish;
  e.stats.prompt_tokens = prompt;
  e.stats.completion_tokens = completion;
  return e;
}

// One stream through relay_generations.
RelayEnd relay_one(engine::Stream& stream,
                   const std::function<bool(const std::string&, std::vector<engine::TokenLogprobs>)>& send,
                   const std::function<bool()>& connected, ServerState& state) {
  engine::Stream* streams[] = {&stream};
  return relay_generations(
      streams, Clock::now(),
      [&](size_t, const std::string& text, std::vector<engine::TokenLogprobs> logprobs) {
        return send(text, std::move(logprobs));
      },
      [](size_t, const RelayEnd&) {}, connected, state)[0];
}

TEST(GenerationRelay, ChoicesAreCarriedTogetherAndEachEndIsHeard) {
  engine::Stream a, b;
  a.push(text_event("a1"));
  b.push(text_event("b1"));
  b.push(done_event(engine::FinishReason::Stop, 3, 1));
  a.push(text_event("a2"));
  a.push(done_event(engine::FinishReason::Length, 3, 2));
  engine::Stream* streams[] = {&a, &b};
  ServerState state(ServerLimits{}, "");
  std::vector<std::string> texts(2);
  std::vector<size_t> ended;
  const std::vector<RelayEnd> ends = relay_generations(
      streams, Clock::now(),
      [&](size_t c, const std::string& t, std::vector<engine::TokenLogprobs>) {
        texts[c] += t;
        return true;
      },
      [&](size_t c, const RelayEnd&) { ended.push_back(c); }, [] { return true; }, state);
  EXPECT_EQ(texts, (std::vector<std::string>{"a1a2", "b1"}));
  EXPECT_EQ(ended, (std::vector<size_t>{1, 0}));  // b ended first
  EXPECT_EQ(ends[0].finish, engine::FinishReason::Length);
  EXPECT_EQ(ends[1].finish, engine::FinishReason::Stop);
}

TEST(GenerationRelay, SendsNonEmptyPiecesThenReportsDone) {
  engine::Stream stream;
  for (const char* piece : {"Hel", "", "lo"}) stream.push(text_event(piece));
  stream.push(done_event(engine::FinishReason::Length, 3, 4));
  ServerState state(ServerLimits{}, "");
  ServerMetrics& metrics = state.metrics();
  std::vector<std::string> sent;
  const RelayEnd end = relay_one(stream, [&](const std::string& t, auto) { sent.push_back(t); return true; }, [] { return true; }, state);
  EXPECT_EQ(end.kind, RelayEnd::Kind::Done);
  EXPECT_EQ(end.finish, engine::FinishReason::Length);
  EXPECT_EQ(end.stats.completion_tokens, 4);
  EXPECT_EQ(sent, (std::vector<std::string>{"Hel", "lo"}));
  EXPECT_FALSE(stream.cancelled());
  const std::string text = metrics.prometheus_text(std::nullopt);
  EXPECT_NE(text.find("nanoserve_generation_tokens_total 4\n"), std::string::npos);
  EXPECT_NE(text.find("nanoserve_time_to_first_token_seconds_count 1\n"), std::string::npos);
  EXPECT_NE(text.find("nanoserve_inter_token_latency_seconds_count 1\n"), std::string::npos);
}

TEST(GenerationRelay, LogprobsOfHeldBackTokensTravelWithTheNextPiece) {
  engine::Stream stream;
  auto with_logprob = [](const char* text, float logprob) {
    engine::Event e = text_event(text);
    e.logprobs.push_back({.chosen = {.bytes = "t", .logprob = logprob}, .top = {}});
    return e;
  };
  stream.push(with_logprob("a", -1.0f));
  stream.push(with_logprob("", -2.0f));  // held back
  stream.push(with_logprob("bc", -3.0f));
  stream.push(with_logprob("", -4.0f));  // a stop string's start: never sent
  stream.push(done_event(engine::FinishReason::Stop, 1, 4));
  ServerState state(ServerLimits{}, "");
  std::vector<std::vector<float>> sent;
  relay_one(stream,
      [&](const std::string&, std::vector<engine::TokenLogprobs> logprobs) {
        sent.emplace_back();
        for (const auto& t : logprobs) sent.back().push_back(t.chosen.logprob);
        return true;
      },
      [] { return true; }, state);
  EXPECT_EQ(sent, (std::vector<std::vector<float>>{{-1.0f}, {-2.0f, -3.0f}}));
}

TEST(GenerationRelay, FailedWriteCancelsTheStream) {
  engine::Stream stream;
  stream.push(text_event("a"));
  stream.push(text_event("b"));
  ServerState state(ServerLimits{}, "");
  ServerMetrics& metrics = state.metrics();
  const RelayEnd end = relay_one(stream, [](const std::string&, auto) { return false; }, [] { return true; }, state);
  EXPECT_EQ(end.kind, RelayEnd::Kind::ClientGone);
  EXPECT_TRUE(stream.cancelled());
  EXPECT_NE(metrics.prometheus_text(std::nullopt).find("nanoserve_request_cancellations_total 1\n"),
            std::string::npos);
}

TEST(GenerationRelay, DisconnectWhileTheEngineIsQuietCancels) {
  engine::Stream stream;  // the engine never answers
  ServerState state(ServerLimits{}, "");
  int checks = 0;
  const RelayEnd end = relay_one(stream, [](const std::string&, auto) { return true; }, [&] { return ++checks < 3; }, state);
  EXPECT_EQ(end.kind, RelayEnd::Kind::ClientGone);
  EXPECT_EQ(checks, 3);
  EXPECT_TRUE(stream.cancelled());
}

TEST(GenerationRelay, EngineErrorIsReported) {
  engine::Stream stream;
  engine::Event error;
  error.kind = engine::Event::Kind::Error;
  error.error = "out of memory";
  stream.push(error);
  ServerState state(ServerLimits{}, "");
  const RelayEnd end = relay_one(stream, [](const std::string&, auto) { return true; }, [] { return true; }, state);
  EXPECT_EQ(end.kind, RelayEnd::Kind::Failed);
  EXPECT_EQ(end.error, "out of memory");
}

// When the server's drain is over, a stream still open ends Failed with a message that says
// why, cancelled (the engine stops spending time on it), and its end is heard; a stream that
// had ended keeps its own end.
TEST(GenerationRelay, ACutGenerationEndsWithAnErrorAndIsCancelled) {
  engine::Stream open, finished;
  open.push(text_event("a1"));
  finished.push(done_event(engine::FinishReason::Stop, 3, 1));
  ServerState state(ServerLimits{}, "");
  engine::Stream* streams[] = {&open, &finished};
  std::vector<std::string> texts(2);
  std::vector<size_t> ended;
  int rounds = 0;
  const std::vector<RelayEnd> ends = relay_generations(
      streams, Clock::now(),
      [&](size_t c, const std::string& t, std::vector<engine::TokenLogprobs>) {
        texts[c] += t;
        return true;
      },
      [&](size_t c, const RelayEnd&) { ended.push_back(c); },
      [&] {  // checked while no event comes: the drain ends after a few checks
        if (++rounds == 3) state.cut_generations();
        return true;
      },
      state);
  EXPECT_EQ(texts[0], "a1");
  EXPECT_EQ(ends[0].kind, RelayEnd::Kind::Failed);
  EXPECT_NE(ends[0].error.find("shutting down"), std::string::npos);
  EXPECT_TRUE(open.cancelled());
  EXPECT_EQ(ends[1].kind, RelayEnd::Kind::Done);
  EXPECT_EQ(ended, (std::vector<size_t>{1, 0}));
}

}  // namespace
}  // namespace nanoserve::server
