// Relaying an engine stream: text in order, held-back pieces skipped, and the stream
// cancelled as soon as the client is gone.
#include <gtest/gtest.h>

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

TEST(GenerationRelay, SendsNonEmptyPiecesThenReportsDone) {
  engine::Stream stream;
  for (const char* piece : {"Hel", "", "lo"}) stream.push(text_event(piece));
  stream.push(done_event(engine::FinishReason::Length, 3, 4));
  ServerMetrics metrics;
  std::vector<std::string> sent;
  const RelayEnd end = relay_generation(
      stream, Clock::now(), [&](const std::string& t) { sent.push_back(t); return true; }, [] { return true; }, metrics);
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

TEST(GenerationRelay, FailedWriteCancelsTheStream) {
  engine::Stream stream;
  stream.push(text_event("a"));
  stream.push(text_event("b"));
  ServerMetrics metrics;
  const RelayEnd end = relay_generation(
      stream, Clock::now(), [](const std::string&) { return false; }, [] { return true; }, metrics);
  EXPECT_EQ(end.kind, RelayEnd::Kind::ClientGone);
  EXPECT_TRUE(stream.cancelled());
  EXPECT_NE(metrics.prometheus_text(std::nullopt).find("nanoserve_request_cancellations_total 1\n"),
            std::string::npos);
}

TEST(GenerationRelay, DisconnectWhileTheEngineIsQuietCancels) {
  engine::Stream stream;  // the engine never answers
  ServerMetrics metrics;
  int checks = 0;
  const RelayEnd end = relay_generation(
      stream, Clock::now(), [](const std::string&) { return true; }, [&] { return ++checks < 3; }, metrics);
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
  ServerMetrics metrics;
  const RelayEnd end = relay_generation(
      stream, Clock::now(), [](const std::string&) { return true; }, [] { return true; }, metrics);
  EXPECT_EQ(end.kind, RelayEnd::Kind::Failed);
  EXPECT_EQ(end.error, "out of memory");
}

}  // namespace
}  // namespace nanoserve::server
