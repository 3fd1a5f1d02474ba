// The events of a streamed message, as Anthropic's service sends them: each kind of piece in
// a block of its own (thinking, text, then each tool use whole), indexes in order, one ping
// after the first block starts, and the end with stop_reason and usage. And the whole
// message's blocks for the same pieces.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anthropic/messages_response.h"

namespace nanoserve::anthropic {
namespace {

using nlohmann::ordered_json;

struct Recorded {
  std::vector<std::string> names;
  std::vector<ordered_json> events;
};

server::RelayEnd done(engine::FinishReason finish, std::string stop = {}) {
  server::RelayEnd end;
  end.finish = finish;
  end.stop = std::move(stop);
  end.stats.prompt_tokens = 30;
  end.stats.cached_tokens = 16;
  end.stats.completion_tokens = 9;
  return end;
}

Recorded record(const std::vector<server::AnswerPieces>& pieces, const server::RelayEnd& end) {
  Recorded out;
  server::SseWriter sse([&](std::string_view bytes) {
    const std::string text(bytes);
    const size_t data = text.find("\ndata: ");
    EXPECT_TRUE(text.starts_with("event: ") && data != std::string::npos && text.ends_with("\n\n")) << text;
    out.names.push_back(text.substr(7, data - 7));
    out.events.push_back(ordered_json::parse(text.substr(data + 7)));
    EXPECT_EQ(out.events.back()["type"], out.names.back());
    return true;
  });
  MessageEvents events(sse, "msg_1", "m");
  events.start(30);
  for (const auto& p : pieces) events.add(p);
  events.finish(end);
  return out;
}

TEST(MessageEvents, ThinkingTextAndToolUsesEachInTheirOwnBlocks) {
  const server::ToolCall call{.id = "call_abc", .name = "f", .arguments = R"({"x": 1})"};
  const Recorded r = record({{.reasoning = "Hmm", .content = "", .calls = {}},
                             {.reasoning = " ok", .content = "", .calls = {}},
                             {.reasoning = "", .content = "Hi", .calls = {}},
                             {.reasoning = "", .content = "", .calls = {call, call}}},
                            done(engine::FinishReason::Stop));
  const std::vector<std::string> expected = {
      "message_start",
      "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_stop",  // thinking
      "content_block_start", "content_block_delta", "content_block_stop",                                 // text
      "content_block_start", "content_block_delta", "content_block_stop",                                 // call
      "content_block_start", "content_block_delta", "content_block_stop",                                 // call
      "message_delta", "message_stop"};
  ASSERT_EQ(r.names, expected);
  EXPECT_EQ(r.events[1]["content_block"]["type"], "thinking");
  EXPECT_EQ(r.events[3]["delta"], ordered_json({{"type", "thinking_delta"}, {"thinking", "Hmm"}}));
  EXPECT_EQ(r.events[7]["delta"], ordered_json({{"type", "text_delta"}, {"text", "Hi"}}));
  EXPECT_EQ(r.events[7]["index"], 1);
  EXPECT_EQ(r.events[9]["content_block"],
            ordered_json(
                {{"type", "tool_use"}, {"id", "toolu_abc"}, {"name", "f"}, {"input", ordered_json::object()}}));
  EXPECT_EQ(r.events[10]["delta"], ordered_json({{"type", "input_json_delta"}, {"partial_json", R"({"x":1})"}}));
  EXPECT_EQ(r.events[14]["index"], 3);
  const ordered_json& end = r.events[15];
  EXPECT_EQ(end["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(end["usage"]["input_tokens"], 14);
  EXPECT_EQ(end["usage"]["cache_read_input_tokens"], 16);
  EXPECT_EQ(end["usage"]["output_tokens"], 9);
}

TEST(MessageEvents, AnEmptyAnswerStillPingsAndEnds) {
  const Recorded r = record({}, done(engine::FinishReason::Length));
  EXPECT_EQ(r.names, (std::vector<std::string>{"message_start", "ping", "message_delta", "message_stop"}));
  EXPECT_EQ(r.events[2]["delta"]["stop_reason"], "max_tokens");
}

TEST(MessageJson, BlocksStopReasonAndStopSequence) {
  const server::AnswerPieces answer{.reasoning = "r", .content = "text", .calls = {}};
  const ordered_json m = message_json("msg_1", "m", answer, done(engine::FinishReason::Stop, "END"));
  EXPECT_EQ(m["content"], ordered_json::parse(R"([{"type": "thinking", "thinking": "r", "signature": ""},
                                                  {"type": "text", "text": "text"}])"));
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
  EXPECT_EQ(message_json("msg_1", "m", answer, done(engine::FinishReason::Stop))["stop_reason"], "end_turn");
  EXPECT_EQ(message_json("msg_1", "m", answer, done(engine::FinishReason::Stop))["stop_sequence"], nullptr);
}

TEST(AnthropicError, TypesFollowTheStatus) {
  auto type = [](int status) {
    return anthropic_error_body(server::ApiError(status, "m", "x"))["error"]["type"].get<std::string>();
  };
  EXPECT_EQ(type(400), "invalid_request_error");
  EXPECT_EQ(type(401), "authentication_error");
  EXPECT_EQ(type(404), "not_found_error");
  EXPECT_EQ(type(413), "request_too_large");
  EXPECT_EQ(type(429), "rate_limit_error");
  EXPECT_EQ(type(500), "api_error");
  EXPECT_EQ(anthropic_error_body(server::ApiError(400, "bad", "x")),
            ordered_json::parse(R"({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})"));
}

}  // namespace
}  // namespace nanoserve::anthropic
