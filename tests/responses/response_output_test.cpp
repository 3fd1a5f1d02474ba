// A response built from an answer's pieces: its items in order (reasoning, message, one
// function_call per call), the typed events that stream them with their sequence numbers, the
// end (completed, or incomplete at max_output_tokens) with usage, and the same items whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "responses/response_output.h"

namespace nanoserve::responses {
namespace {

using nlohmann::ordered_json;

server::RelayEnd done(engine::FinishReason finish) {
  server::RelayEnd end;
  end.finish = finish;
  end.stats.prompt_tokens = 30;
  end.stats.cached_tokens = 16;
  end.stats.completion_tokens = 9;
  return end;
}

const std::vector<server::AnswerPieces> kPieces = {
    {.reasoning = "Hmm", .content = "", .calls = {}},
    {.reasoning = "", .content = "Hi", .calls = {}},
    {.reasoning = "", .content = " there", .calls = {{.id = "call_1", .name = "f", .arguments = R"({"x":1})"}}}};

TEST(ResponseOutput, StreamsEachItemsEventsInOrder) {
  std::vector<ordered_json> events;
  server::SseWriter sse([&](std::string_view bytes) {
    const std::string text(bytes);
    const size_t data = text.find("\ndata: ");
    events.push_back(ordered_json::parse(text.substr(data + 7)));
    EXPECT_EQ(text.substr(7, data - 7), events.back()["type"]);
    return true;
  });
  ResponseOutput output({{"id", "resp_1"}, {"object", "response"}}, &sse);
  output.start();
  for (const auto& p : kPieces) output.add(p);
  const ordered_json whole = output.finish(done(engine::FinishReason::Stop));

  std::vector<std::string> types;
  for (size_t i = 0; i < events.size(); ++i) {
    types.push_back(events[i]["type"]);
    EXPECT_EQ(events[i]["sequence_number"], i);
  }
  const std::vector<std::string> expected = {
      "response.created", "response.in_progress",
      "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
      "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.delta", "response.output_text.done", "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done",
      "response.completed"};
  ASSERT_EQ(types, expected);
  EXPECT_EQ(events[12]["text"], "Hi there");
  EXPECT_EQ(events[16]["delta"], R"({"x":1})");
  EXPECT_EQ(events[15]["item"]["arguments"], "");
  EXPECT_EQ(events.back()["response"], whole);

  ASSERT_EQ(whole["output"].size(), 3u);
  EXPECT_EQ(whole["status"], "completed");
  EXPECT_EQ(whole["output"][0]["content"][0], ordered_json({{"type", "reasoning_text"}, {"text", "Hmm"}}));
  EXPECT_EQ(whole["output"][1]["content"][0]["text"], "Hi there");
  EXPECT_EQ(whole["output"][2]["call_id"], "call_1");
  EXPECT_EQ(whole["output"][2]["status"], "completed");
  EXPECT_EQ(whole["usage"]["input_tokens_details"]["cached_tokens"], 16);
  EXPECT_EQ(whole["usage"]["total_tokens"], 39);
}

TEST(ResponseOutput, WholeItHasTheSameItemsAndIsIncompleteAtTheCap) {
  ResponseOutput output({{"id", "resp_1"}}, nullptr);
  output.start();
  for (const auto& p : kPieces) output.add(p);
  const ordered_json whole = output.finish(done(engine::FinishReason::Length));
  EXPECT_EQ(whole["status"], "incomplete");
  EXPECT_EQ(whole["incomplete_details"], ordered_json({{"reason", "max_output_tokens"}}));
  ASSERT_EQ(whole["output"].size(), 3u);
  EXPECT_EQ(whole["output"][1]["type"], "message");
}

}  // namespace
}  // namespace nanoserve::responses
