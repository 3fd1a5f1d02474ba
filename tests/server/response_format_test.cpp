// Response objects, SSE framing, error bodies, the API key check and the log line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/api_key_auth.h"
#include "server/request_id.h"
#include "server/request_log.h"
#include "server/response_json.h"
#include "server/sse.h"

namespace nanoserve::server {
namespace {

using json = nlohmann::ordered_json;

const ResponseHeader kHeader{.id = "chatcmpl-abc", .created = 1700000000, .model = "tiny"};

engine::RequestStats some_stats() {
  engine::RequestStats s;
  s.prompt_tokens = 7;
  s.completion_tokens = 5;
  s.queue_ms = 0.5;
  s.ttft_ms = 12.5;
  s.prefill_tok_s = 560;
  s.decode_tok_s = 80;
  s.peak_memory_bytes = 1 << 20;
  s.kv_blocks = 3;
  s.kv_peak_bytes = 3 << 16;
  s.cached_tokens = 4;
  s.decode_steps = 4;
  s.verify_steps = 1;
  s.draft_tokens = 3;
  s.accepted_tokens = 1;
  s.drafted_at = {1, 1, 1};
  s.accepted_at = {1, 0, 0};
  return s;
}

TEST(ResponseJson, ChatCompletionHasOpenAisFieldsAndTheEngineClock) {
  const json r = chat_completion(kHeader, "Hello!", engine::FinishReason::Length, some_stats());
  EXPECT_EQ(r["id"], "chatcmpl-abc");
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["created"], 1700000000);
  EXPECT_EQ(r["model"], "tiny");
  ASSERT_EQ(r["choices"].size(), 1u);
  EXPECT_EQ(r["choices"][0],
            json({{"index", 0}, {"message", {{"role", "assistant"}, {"content", "Hello!"}}}, {"finish_reason", "length"},
                  {"logprobs", nullptr}}));
  EXPECT_EQ(r["usage"], json({{"prompt_tokens", 7}, {"completion_tokens", 5}, {"total_tokens", 12},
                              {"prompt_tokens_details", {{"cached_tokens", 4}}}}));
  EXPECT_EQ(r["nanoserve"], json({{"cached_tokens", 4}, {"queue_ms", 0.5}, {"ttft_ms", 12.5}, {"prefill_tok_s", 560.0},
                                  {"decode_tok_s", 80.0}, {"peak_memory_bytes", 1 << 20}, {"kv_blocks", 3},
                                  {"kv_peak_bytes", 3 << 16}, {"decode_steps", 4}, {"tokens_per_step", 1.25},
                                  {"draft_tokens", 3}, {"accepted_tokens", 1}, {"verify_steps", 1},
                                  {"tokens_per_verify_step", 2.0},
                                  {"drafted_at", {1, 1, 1}}, {"accepted_at", {1, 0, 0}}}));
}

TEST(ResponseJson, TextCompletion) {
  const json r = text_completion({.id = "cmpl-x", .created = 1, .model = "m"}, "return 1", engine::FinishReason::Stop,
                                 some_stats());
  EXPECT_EQ(r["object"], "text_completion");
  EXPECT_EQ(r["choices"][0], json({{"index", 0}, {"text", "return 1"}, {"finish_reason", "stop"}, {"logprobs", nullptr}}));
  EXPECT_EQ(r["usage"]["total_tokens"], 12);
  EXPECT_TRUE(r.contains("nanoserve"));
}

TEST(ResponseJson, Chunks) {
  const json role = chat_chunk(kHeader, {{"role", "assistant"}, {"content", ""}});
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());

  const json finish = chat_finish_chunk(kHeader, engine::FinishReason::Stop);
  EXPECT_EQ(finish["choices"][0]["delta"], json::object());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "stop");

  const json text = text_chunk(kHeader, "abc");
  EXPECT_EQ(text["object"], "text_completion");
  EXPECT_EQ(text["choices"][0]["text"], "abc");
  EXPECT_EQ(text_finish_chunk(kHeader, engine::FinishReason::Length)["choices"][0]["finish_reason"], "length");

  const json usage = usage_chunk(kHeader, "chat.completion.chunk", some_stats());
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
}

TEST(Sse, EventsAreOneDataLineAndABlankLine) {
  EXPECT_EQ(sse_event({{"a", "line one\nline two"}}), "data: {\"a\":\"line one\\nline two\"}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(Sse, InvalidUtf8IsReplacedNotThrown) {
  EXPECT_EQ(sse_event({{"t", std::string("a\xff")}}), "data: {\"t\":\"a\xef\xbf\xbd\"}\n\n");
}

TEST(Sse, WriterStopsAfterTheFirstFailedWrite) {
  std::vector<std::string> written;
  int writes_left = 2;
  SseWriter sse([&](std::string_view bytes) {
    if (writes_left-- <= 0) return false;
    written.emplace_back(bytes);
    return true;
  });
  EXPECT_TRUE(sse.send({{"n", 1}}));
  EXPECT_TRUE(sse.send({{"n", 2}}));
  EXPECT_FALSE(sse.send({{"n", 3}}));
  EXPECT_FALSE(sse.send_done());
  EXPECT_FALSE(sse.ok());
  EXPECT_EQ(written, (std::vector<std::string>{"data: {\"n\":1}\n\n", "data: {\"n\":2}\n\n"}));
}

TEST(ApiErrorBody, NullParamAndCodeWhenAbsent) {
  EXPECT_EQ(error_body(ApiError(500, "boom", "server_error")),
            json({{"error", {{"message", "boom"}, {"type", "server_error"}, {"param", nullptr}, {"code", nullptr}}}}));
  const ApiError e = invalid_request("bad", "messages", "empty_array");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(error_body(e)["error"]["param"], "messages");
  EXPECT_EQ(error_body(e)["error"]["code"], "empty_array");
}

TEST(ApiKey, OnlyTheExactBearerTokenMatches) {
  EXPECT_TRUE(bearer_token_matches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("s3cret", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("Bearer s3cret2", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("Bearer S3cret", "s3cret"));
  EXPECT_FALSE(bearer_token_matches("Basic  s3cret", "s3cret"));
}

TEST(RequestId, PrefixAndRandomTail) {
  const std::string a = random_request_id("chatcmpl-"), b = random_request_id("chatcmpl-");
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(a.size(), 9u + 24u);
  EXPECT_NE(a, b);
}

TEST(RequestLog, LineNamesTheRequestAndTheEngineClock) {
  RequestLogRecord record;
  const auto now = record.received + std::chrono::milliseconds(40);
  EXPECT_EQ(request_log_line("GET", "/health", 200, record, now), "GET /health 200 total=40.0ms");
  record.id = "chatcmpl-abc";
  record.stats = some_stats();
  EXPECT_EQ(request_log_line("POST", "/v1/chat/completions", 200, record, now),
            "POST /v1/chat/completions 200 chatcmpl-abc prompt=7 completion=5 queue=0.5ms ttft=12.5ms "
            "decode=80.0tok/s total=40.0ms");
  record.stats.reset();
  record.cancelled = true;
  EXPECT_EQ(request_log_line("POST", "/v1/completions", 200, record, now),
            "POST /v1/completions 200 chatcmpl-abc cancelled (client disconnected) total=40.0ms");
}

}  // namespace
}  // namespace nanoserve::server
