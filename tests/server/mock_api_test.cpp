// The API of a real `nanoserve serve --engine mock` process, over HTTP: the response and
// stream formats, stop strings, and the error answer for every kind of bad request.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <thread>

#include "engine/mock_engine.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/eventually.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

const std::string kPassage = engine::kMockPassage;

class MockApi : public testing::Test {
 protected:
  // One server for the suite, started by the first test; started in a test (not in
  // SetUpTestSuite) so that missing ../shared data stops each test with the skip marker
  // instead of leaving every test without a server.
  void SetUp() override {
    if (!server_)
      server_ = std::make_unique<ServerProcess>(mock_server_args("--ctx 256 --max-tokens 1000 --max-body-bytes 65536"));
  }
  static void TearDownTestSuite() {
    if (!server_) return;
    EXPECT_EQ(server_->stop(), 0) << server_->log();  // a clean exit (under ASan: no leak, no error)
    server_.reset();
  }
  httplib::Client client() { return server_->client(); }
  static std::unique_ptr<ServerProcess> server_;
};
std::unique_ptr<ServerProcess> MockApi::server_;

json chat(json extra = json::object()) {
  json body = {{"model", "whatever"}, {"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
               {"temperature", 0}, {"max_tokens", 12}};
  body.update(extra);
  return body;
}

TEST_F(MockApi, Health) {
  auto c = client();
  const JsonResponse r = get(c, "/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, json({{"status", "ok"}}));
}

TEST_F(MockApi, ModelsListsTheServedModel) {
  auto c = client();
  const JsonResponse r = get(c, "/v1/models");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["object"], "list");
  ASSERT_EQ(r.body["data"].size(), 1u);
  const json& m = r.body["data"][0];
  EXPECT_TRUE(m["id"].is_string() && !m["id"].get<std::string>().empty());
  EXPECT_EQ(m["object"], "model");
  EXPECT_TRUE(m["created"].is_number_integer());
  EXPECT_EQ(m["owned_by"], "nanoserve");
}

TEST_F(MockApi, ChatCompletion) {
  auto c = client();
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat());
  ASSERT_EQ(r.status, 200) << r.text;
  const json& b = r.body;
  EXPECT_EQ(b["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(b["object"], "chat.completion");
  EXPECT_TRUE(b["created"].is_number_integer());
  EXPECT_EQ(b["model"], get(c, "/v1/models").body["data"][0]["id"]);
  const json& choice = b["choices"][0];
  EXPECT_EQ(choice["index"], 0);
  EXPECT_EQ(choice["message"]["role"], "assistant");
  const std::string content = choice["message"]["content"];
  EXPECT_FALSE(content.empty());
  EXPECT_EQ(kPassage.rfind(content, 0), 0u) << content;  // greedy: the passage's start
  EXPECT_EQ(choice["finish_reason"], "length");
  EXPECT_TRUE(choice["logprobs"].is_null());
  EXPECT_GT(b["usage"]["prompt_tokens"], 0);
  EXPECT_EQ(b["usage"]["completion_tokens"], 12);
  EXPECT_EQ(b["usage"]["total_tokens"], b["usage"]["prompt_tokens"].get<int>() + 12);
  for (const char* key :
       {"queue_ms", "ttft_ms", "prefill_tok_s", "decode_tok_s", "peak_memory_bytes", "kv_blocks", "kv_peak_bytes"})
    EXPECT_TRUE(b["nanoserve"][key].is_number()) << key;
}

TEST_F(MockApi, ChatStreamFramingAndText) {
  auto c = client();
  const std::string whole = post_json(c, "/v1/chat/completions", chat()).body["choices"][0]["message"]["content"];
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat({{"stream", true}}));
  ASSERT_EQ(r.status, 200) << r.text;
  const auto payloads = sse_payloads(r.text);
  ASSERT_GE(payloads.size(), 4u);
  EXPECT_EQ(payloads.back(), "[DONE]");
  const json first = json::parse(payloads.front());
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  const json finish = json::parse(payloads[payloads.size() - 2]);
  EXPECT_EQ(finish["choices"][0]["delta"], json::object());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(finish["nanoserve"]["ttft_ms"].is_number());
  EXPECT_FALSE(finish.contains("usage"));
  for (size_t i = 1; i + 2 < payloads.size(); ++i) {
    const json chunk = json::parse(payloads[i]);
    EXPECT_EQ(chunk["id"], first["id"]);
    EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
    EXPECT_TRUE(chunk["choices"][0]["delta"]["content"].is_string());
    EXPECT_FALSE(chunk.contains("nanoserve"));
  }
  EXPECT_EQ(streamed_text(payloads), whole);
}

TEST_F(MockApi, ChatStreamWithUsage) {
  auto c = client();
  const JsonResponse r =
      post_json(c, "/v1/chat/completions", chat({{"stream", true}, {"stream_options", {{"include_usage", true}}}}));
  ASSERT_EQ(r.status, 200) << r.text;
  const auto payloads = sse_payloads(r.text);
  ASSERT_GE(payloads.size(), 4u);
  EXPECT_EQ(payloads.back(), "[DONE]");
  const json usage = json::parse(payloads[payloads.size() - 2]);
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 12);
  EXPECT_TRUE(usage["nanoserve"]["decode_tok_s"].is_number());
  const json finish = json::parse(payloads[payloads.size() - 3]);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  for (size_t i = 0; i + 2 < payloads.size(); ++i) EXPECT_TRUE(json::parse(payloads[i])["usage"].is_null()) << i;
}

TEST_F(MockApi, StopStringsEndTheTextAndNeverLeak) {
  auto c = client();
  // "The lighthouse keeper ...": "keeper" is a few tokens in; "house kee" spans tokens.
  for (const json& stop : {json("keeper"), json::array({"nothing", "house kee"})}) {
    const json body = chat({{"stop", stop}, {"max_tokens", 40}});
    const std::string expected = kPassage.substr(0, kPassage.find(stop.is_string() ? "keeper" : "house kee"));
    const JsonResponse whole = post_json(c, "/v1/chat/completions", body);
    ASSERT_EQ(whole.status, 200) << whole.text;
    EXPECT_EQ(whole.body["choices"][0]["message"]["content"], expected);
    EXPECT_EQ(whole.body["choices"][0]["finish_reason"], "stop");
    json streaming = body;
    streaming["stream"] = true;
    const JsonResponse streamed = post_json(c, "/v1/chat/completions", streaming);
    EXPECT_EQ(streamed_text(sse_payloads(streamed.text)), expected);
    EXPECT_EQ(streamed.text.find("kee\""), std::string::npos);
  }
}

TEST_F(MockApi, TextCompletion) {
  auto c = client();
  const json body = {{"model", "m"}, {"prompt", "Once upon a time"}, {"temperature", 0}, {"max_tokens", 6}};
  const JsonResponse r = post_json(c, "/v1/completions", body);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(r.body["object"], "text_completion");
  const std::string text = r.body["choices"][0]["text"];
  EXPECT_EQ(kPassage.rfind(text, 0), 0u);
  EXPECT_EQ(r.body["usage"]["completion_tokens"], 6);
  EXPECT_TRUE(r.body.contains("nanoserve"));

  json streaming = body;
  streaming["stream"] = true;
  const auto payloads = sse_payloads(post_json(c, "/v1/completions", streaming).text);
  EXPECT_EQ(payloads.back(), "[DONE]");
  EXPECT_EQ(json::parse(payloads.front())["object"], "text_completion");
  EXPECT_EQ(json::parse(payloads[payloads.size() - 2])["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(streamed_text(payloads), text);

  // Token ids as the prompt.
  const JsonResponse ids = post_json(c, "/v1/completions", {{"prompt", {1, 2, 3}}, {"max_tokens", 2}});
  EXPECT_EQ(ids.status, 200) << ids.text;
  EXPECT_EQ(ids.body["usage"]["prompt_tokens"], 3);
}

TEST_F(MockApi, UnknownFieldsAreIgnored) {
  auto c = client();
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat({{"future_option", {{"x", 1}}}, {"user", "u1"}}));
  EXPECT_EQ(r.status, 200) << r.text;
}

struct BadRequest {
  std::string path;
  std::string body;
  std::string param;  // empty: null
};

void PrintTo(const BadRequest& request, std::ostream* os) { *os << request.path << " " << request.body.substr(0, 120); }

class MockApiErrors : public MockApi, public testing::WithParamInterface<BadRequest> {};

TEST_P(MockApiErrors, Answer400WithOpenAiErrorBody) {
  auto c = client();
  const JsonResponse r = post_raw(c, GetParam().path, GetParam().body);
  EXPECT_EQ(r.status, 400) << r.text;
  ASSERT_TRUE(r.body.is_object()) << r.text;
  const json& e = r.body["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty());
  EXPECT_EQ(e["type"], "invalid_request_error");
  if (GetParam().param.empty()) {
    EXPECT_TRUE(e["param"].is_null()) << r.text;
  } else {
    EXPECT_EQ(e["param"], GetParam().param) << r.text;
  }
  EXPECT_TRUE(e.contains("code"));
}

std::string chat_with(json extra) { return chat(std::move(extra)).dump(); }

INSTANTIATE_TEST_SUITE_P(
    Requests, MockApiErrors,
    testing::Values(
        BadRequest{"/v1/chat/completions", "{\"messages\": [", ""},
        BadRequest{"/v1/chat/completions", "[1, 2]", ""},
        BadRequest{"/v1/chat/completions", "{}", "messages"},
        BadRequest{"/v1/chat/completions", R"({"messages": []})", "messages"},
        BadRequest{"/v1/chat/completions", R"({"messages": "hello"})", "messages"},
        BadRequest{"/v1/chat/completions", R"({"messages": [{"role": "user", "content": 7}]})", "messages[0].content"},
        BadRequest{"/v1/chat/completions", R"({"messages": [{"role": "boss", "content": "x"}]})", "messages[0].role"},
        BadRequest{"/v1/chat/completions", chat_with({{"temperature", "warm"}}), "temperature"},
        BadRequest{"/v1/chat/completions", chat_with({{"max_tokens", 0}}), "max_tokens"},
        BadRequest{"/v1/chat/completions", chat_with({{"max_tokens", -1}}), "max_tokens"},
        BadRequest{"/v1/chat/completions", chat_with({{"max_tokens", 5000}}), "max_tokens"},  // > --max-tokens
        BadRequest{"/v1/chat/completions", chat_with({{"max_tokens", 300}}), "max_tokens"},   // > the context
        BadRequest{"/v1/chat/completions", chat_with({{"messages", {{{"role", "user"}, {"content", std::string(2000, 'x')}}}}}),
                   "messages"},  // longer than the context
        BadRequest{"/v1/chat/completions", chat_with({{"stop", json(std::vector<std::string>(20, "x"))}}), "stop"},
        BadRequest{"/v1/chat/completions", chat_with({{"logit_bias", {{"99999", 1}}}}), "logit_bias"},
        BadRequest{"/v1/chat/completions", chat_with({{"n", 30}}), "n"},
        BadRequest{"/v1/chat/completions", chat_with({{"stream", "yes"}}), "stream"},
        BadRequest{"/v1/chat/completions", chat_with({{"stream_options", {{"include_usage", true}}}}), "stream_options"},
        BadRequest{"/v1/completions", R"({"model": "m"})", "prompt"},
        BadRequest{"/v1/completions", R"({"prompt": 5})", "prompt"},
        BadRequest{"/v1/completions", R"({"prompt": [1, 99999]})", "prompt"},
        BadRequest{"/v1/completions", R"({"prompt": "x", "echo": true})", "echo"},
        BadRequest{"/v1/completions", R"({"prompt": ""})", "prompt"}));

TEST_F(MockApi, BodyOverTheLimitIs413) {
  auto c = client();
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat({{"padding", std::string(100000, 'x')}}));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(r.body["error"]["code"], "request_too_large");
}

TEST_F(MockApi, UnknownRouteIs404InTheSameShape) {
  auto c = client();
  for (const auto& r : {get(c, "/v1/nothing"), post_json(c, "/v1/chat", chat())}) {
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.body["error"]["type"], "invalid_request_error");
    EXPECT_TRUE(r.body["error"]["message"].is_string());
    EXPECT_TRUE(r.body["error"]["param"].is_null());
  }
}

TEST_F(MockApi, MetricsAfterRequests) {
  auto c = client();
  ASSERT_EQ(post_json(c, "/v1/chat/completions", chat()).status, 200);
  ASSERT_EQ(post_json(c, "/v1/chat/completions", chat({{"n", 99}})).status, 400);
  // A response is counted once sent, just after the client has it.
  std::string text;
  EXPECT_TRUE(eventually([&] {
    auto res = c.Get("/metrics");
    if (!res || res->status != 200) return false;
    EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
    text = res->body;
    return text.find("nanoserve_http_requests_total{code=\"400\"}") != std::string::npos;
  })) << text;
  for (const char* expected :
       {"nanoserve_http_requests_total{code=\"200\"} ", "nanoserve_http_requests_total{code=\"400\"} ",
        "# TYPE nanoserve_prompt_tokens_total counter", "# TYPE nanoserve_generation_tokens_total counter",
        "# TYPE nanoserve_time_to_first_token_seconds histogram", "nanoserve_time_to_first_token_seconds_bucket{le=\"+Inf\"} ",
        "# TYPE nanoserve_inter_token_latency_seconds histogram", "nanoserve_request_cancellations_total ",
        "nanoserve_requests_waiting ", "nanoserve_requests_running ", "nanoserve_kv_cache_usage_ratio "})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

TEST_F(MockApi, OneLogLinePerRequest) {
  auto c = client();
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat());
  ASSERT_EQ(r.status, 200);
  const std::string id = r.body["id"];
  const std::string start = "POST /v1/chat/completions 200 " + id + " prompt=";
  const std::string log = server_->wait_for_log(start, std::chrono::seconds(5));
  const size_t at = log.find(start);
  const std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("completion=12 queue="), std::string::npos) << line;
  EXPECT_NE(line.find("ms ttft="), std::string::npos) << line;
  EXPECT_NE(line.find("tok/s total="), std::string::npos) << line;
}

}  // namespace
}  // namespace nanoserve::test
