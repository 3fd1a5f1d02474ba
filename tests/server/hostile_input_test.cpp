// A real `nanoserve serve --engine mock` process under hostile input, on loopback, bounded in
// count and time: over a thousand malformed requests (framing, bad JSON, wrong types,
// invalid UTF-8, deep nesting, header abuse), huge and chunked bodies, a compression bomb,
// slow clients, pipelining and mass disconnects. Every answer must be a clean 4xx with the
// API's error body, never a 5xx, a crash or a hang; memory, threads and descriptors must come
// back to where they were.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/raw_connection.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/eventually.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// What /proc says of a process.
struct ProcessUse {
  size_t rss_kb = 0;
  size_t peak_rss_kb = 0;
  size_t threads = 0;
  size_t descriptors = 0;
};

ProcessUse process_use(pid_t pid) {
  ProcessUse use;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") status >> use.rss_kb;
    if (key == "VmHWM:") status >> use.peak_rss_kb;
    if (key == "Threads:") status >> use.threads;
  }
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++use.descriptors;
  return use;
}

std::string post(const std::string& path, const std::string& body, const std::string& headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kChat = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4})";

// Over a thousand requests that no server should accept, each with the status range it must get.
std::vector<std::string> malformed_requests() {
  std::vector<std::string> out;
  const std::string h = "POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\n";
  // Framing and header abuse.
  for (const std::string& r : {
           h + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
           h + "Content-Length: +96\r\n\r\n",
           h + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
           h + "Transfer-Encoding: gzip\r\n\r\n",
           h + "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
           h + "Transfer-Encoding: chunked\r\n\r\n5\r\nabcdefg\r\n",
           h + "X-Bad: a\rb\r\n\r\n",
           h + std::string("X-Bad: a") + '\0' + "b\r\n\r\n",
           h + "NoColon\r\n\r\n",
           h + " folded: x\r\n\r\n",
           h + "Bad Name: x\r\n\r\n",
           std::string("POST /v1/chat/completions HTTP/1.1\r\n\r\n"),
           h + "Host: u\r\n\r\n",
           std::string("GET / HTTP/9.9\r\nHost: t\r\n\r\n"),
           std::string("GET /\x01 HTTP/1.1\r\nHost: t\r\n\r\n"),
           std::string("GET " + std::string(10000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n"),
           h + "X-Big: " + std::string(20000, 'b') + "\r\n\r\n",
           h + "Content-Encoding: gzip\r\nContent-Length: 4\r\n\r\nxxxx",
           h + "Expect: 999-nothing\r\n\r\n",
           std::string("GET / HTTP/1.1\nHost: t\n\n"),
       })
    out.push_back(r);
  // Every prefix of a valid body: truncated JSON.
  for (size_t n = 0; n < kChat.size(); ++n) out.push_back(post("/v1/chat/completions", kChat.substr(0, n)));
  // Fields of the wrong type or out of range.
  const std::vector<std::pair<std::string, std::vector<std::string>>> wrong = {
      {"messages", {"1", "\"x\"", "{}", "[1]", "[{\"role\":5}]", "[{\"role\":\"user\"}]", "[{\"role\":\"user\",\"content\":5}]",
                    "[{\"role\":\"nobody\",\"content\":\"x\"}]", "null", "true"}},
      {"temperature", {"\"x\"", "{}", "[]", "true", "-1", "1e999"}},
      {"max_tokens", {"\"x\"", "-1", "1.5", "{}", "[]", "true", "0", "99999999999"}},
      {"top_p", {"\"x\"", "-0.5", "2", "{}", "[]"}},
      {"stream", {"\"yes\"", "1", "{}", "[]"}},
      {"stop", {"1", "{}", "[1]", "[\"a\",2]"}},
      {"n", {"17", "0", "\"x\""}},
      {"seed", {"\"x\"", "1.5", "{}"}},
      {"logit_bias", {"1", "[]", "{\"x\":1}", "{\"1\":\"x\"}", "{\"1\":1000}"}},
      {"presence_penalty", {"\"x\"", "5", "-5"}},
      {"frequency_penalty", {"\"x\"", "5", "{}"}},
      {"stream_options", {"1", "\"x\"", "{\"include_usage\":1}"}},
      {"response_format", {"1", "\"x\"", "{\"type\":\"nothing\"}",
                           "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"not\":{}}}}",
                           "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"maxLength\":1e9}}}"}},
  };
  for (const auto& [field, values] : wrong)
    for (const std::string& v : values) {
      json body = json::parse(kChat);
      body[field] = json::parse(v, nullptr, false, true);
      if (body[field].is_discarded()) continue;
      out.push_back(post("/v1/chat/completions", body.dump()));
    }
  // Invalid UTF-8 in a message and in a key.
  for (const std::string bad : {"\xff", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80", "\xe2\x82"}) {
    out.push_back(post("/v1/chat/completions",
                       R"({"model":"m","messages":[{"role":"user","content":")" + bad + R"("}]})"));
    out.push_back(post("/v1/completions", R"({"model":"m","prompt":")" + bad + R"("})"));
    out.push_back(post("/v1/chat/completions", "{\"" + bad + "\":1}"));
  }
  // Deep nesting, up to far past the limit.
  for (const size_t depth : {65, 100, 1000, 10000, 100000, 1000000})
    for (const std::string& open_close : {std::string("[]"), std::string("{}")}) {
      std::string nested;
      if (open_close == "[]") {
        nested = std::string(depth, '[') + std::string(depth, ']');
      } else {
        for (size_t i = 0; i < depth && nested.size() < 4'000'000; ++i) nested += "{\"a\":";
        nested += "1";
        nested += std::string((nested.size() - 1) / 5, '}');
      }
      out.push_back(post("/v1/completions", R"({"prompt":"x","x":)" + nested + "}"));
    }
  // Not JSON at all, or JSON that is not an object.
  for (const std::string& body : {std::string(""), std::string("null"), std::string("[]"), std::string("42"),
                                  std::string("\"s\""), std::string("{'a':1}"), std::string("{\"a\":1,}"),
                                  std::string("{\"a\":NaN}"), std::string("\xef\xbb\xbf{}")})
    for (const char* path : {"/v1/chat/completions", "/v1/completions"}) out.push_back(post(path, body));
  // Completions' own fields.
  for (const std::string prompt : {"5", "{}", "[[1,2],[3]]", "[1, 99999999]", "[-1]", "[\"a\", 1]", "\"\"", "[]"})
    out.push_back(post("/v1/completions", R"({"model":"m","prompt":)" + prompt + "}"));
  // Unknown routes and methods, each in the same error shape (the chat page is at / alone, not at
  // /index.html).
  for (const std::string target :
       {"/index.html", "/v1", "/v1/chat", "/v1/embeddings", "/admin", "/../../etc/passwd", "/%00"})
    for (const std::string method : {"GET", "POST", "DELETE", "PUT"})
      out.push_back(method + " " + target + " HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
  // Repeat the lot with a keep-alive header and with HTTP/1.0 where it parses alike, until 1,000.
  const size_t base = out.size();
  for (size_t i = 0; out.size() < 1000; ++i) {
    std::string r = out[i % base];
    const size_t crlf = r.find("\r\n");
    if (crlf != std::string::npos) r.insert(crlf + 2, i % 2 ? "Connection: close\r\n" : "X-Variant: " + std::to_string(i) + "\r\n");
    out.push_back(std::move(r));
  }
  return out;
}

class HostileInput : public testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<ServerProcess>(mock_server_args("--ctx 256")); }
  void TearDown() override {
    if (!server_) return;
    EXPECT_EQ(server_->stop(), 0) << server_->log().substr(0, 4000);
  }

  // /health still answers 200 (the wait is generous: whether it answers is the test, not how
  // fast, which the benchmarks measure).
  bool healthy() {
    RawConnection c(server_->port());
    c.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
    return status_of(c.read_response(std::chrono::seconds(60))) == 200;
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(HostileInput, AThousandMalformedRequestsGetCleanErrors) {
  const std::vector<std::string> requests = malformed_requests();
  ASSERT_GE(requests.size(), 1000u);
  size_t clean = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    RawConnection c(server_->port());
    c.send(requests[i]);
    const std::string response = c.read_response(10s);
    const int status = status_of(response);
    const json body = json::parse(body_of(response), nullptr, false);
    const bool is_clean = status >= 400 && status < 500 && body.is_object() && body.contains("error") &&
                          body["error"]["message"].is_string() && body["error"]["type"].is_string();
    if (is_clean) {
      ++clean;
    } else {
      ADD_FAILURE() << "request " << i << " got: " << response.substr(0, 300) << "\nfor: " << requests[i].substr(0, 300);
    }
  }
  EXPECT_EQ(clean, requests.size());
  EXPECT_TRUE(healthy());
}

// The other APIs' bodies, malformed the same ways: each answer is a 4xx in that API's own
// error shape (Anthropic's {"type": "error", "error": {...}}; the Responses API's OpenAI shape).
struct ApiCase {
  std::string path;
  std::string valid;  // a body it accepts
  std::vector<std::pair<std::string, std::vector<std::string>>> wrong;  // field -> bad values
  bool (*is_own_error)(const json& body);
};

bool is_anthropic_error(const json& b) {
  return b.is_object() && b.value("type", "") == "error" && b.contains("error") && b["error"].is_object() &&
         b["error"]["type"].is_string() && b["error"]["message"].is_string();
}

bool is_ollama_error(const json& b) { return b.is_object() && b.size() == 1 && b["error"].is_string(); }

bool is_openai_error(const json& b) {
  return b.is_object() && b.contains("error") && b["error"].is_object() && b["error"]["message"].is_string() &&
         b["error"]["type"].is_string();
}

std::vector<ApiCase> api_cases() {
  return {
      {"/v1/messages", R"({"model":"m","max_tokens":4,"messages":[{"role":"user","content":"hi"}]})",
       {{"messages", {"1", "{}", "[]", "[1]", "[{\"role\":\"user\"}]", "[{\"role\":\"bot\",\"content\":\"x\"}]",
                      "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"}]}]",
                      "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]",
                      "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\"}]}]",
                      "[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"x\"}]}]", "null"}},
        {"max_tokens", {"\"x\"", "0", "-1", "1.5", "{}"}},
        {"system", {"1", "{}", "[1]", "[{\"type\":\"image\"}]"}},
        {"temperature", {"\"x\"", "-1", "3"}},
        {"stop_sequences", {"1", "[1]", "[\"\"]"}},
        {"tools", {"1", "[1]", "[{\"name\":\"f\"}]", "[{\"type\":\"bash_20250124\",\"name\":\"bash\"}]"}},
        {"tool_choice", {"1", "{\"type\":\"any\"}", "{\"type\":\"nope\"}"}},
        {"thinking", {"1", "{\"type\":\"enabled\"}", "{\"type\":\"x\"}"}},
        {"output_config", {"1", "{\"format\":{\"type\":\"json_schema\"}}",
                           "{\"format\":{\"type\":\"json_schema\",\"schema\":{\"not\":{}}}}"}}},
       is_anthropic_error},
      {"/v1/messages/count_tokens", R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
       {{"messages", {"1", "[]", "[{\"role\":\"user\",\"content\":5}]"}}, {"system", {"[1]"}}},
       is_anthropic_error},
      {"/v1/responses", R"({"model":"m","input":"hi","max_output_tokens":4})",
       {{"input", {"1", "{}", "[]", "[1]", "[{\"role\":\"user\"}]", "[{\"role\":\"bot\",\"content\":\"x\"}]",
                   "[{\"type\":\"item_reference\",\"id\":\"x\"}]", "[{\"type\":\"function_call\",\"name\":\"f\"}]",
                   "[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\"}]}]", "null"}},
        {"max_output_tokens", {"\"x\"", "0", "-1", "{}"}},
        {"instructions", {"1", "{}"}},
        {"tools", {"1", "[1]", "[{\"type\":\"function\"}]"}},
        {"tool_choice", {"1", "\"required\"", "{\"type\":\"function\"}"}},
        {"text", {"1", "{\"format\":{\"type\":\"x\"}}", "{\"format\":{\"type\":\"json_schema\",\"name\":\"x\"}}"}},
        {"previous_response_id", {"\"resp_1\""}},
        {"background", {"true"}}},
       is_openai_error},
      {"/api/chat", R"({"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":4}})",
       {{"model", {"1", "null"}},
        {"messages", {"1", "{}", "[1]", "[{\"role\":5}]", "[{\"role\":\"bot\",\"content\":\"x\"}]",
                      "[{\"role\":\"user\",\"content\":\"x\",\"images\":[\"aGk=\"]}]",
                      "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{}]}]"}},
        {"options", {"1", "[]", "{\"num_predict\":0}", "{\"num_predict\":\"x\"}", "{\"temperature\":-1}",
                     "{\"stop\":[1]}", "{\"num_ctx\":99999999}", "{\"top_p\":2}"}},
        {"format", {"1", "\"yaml\"", "{\"not\":{}}"}},
        {"think", {"1", "\"max\""}},
        {"stream", {"\"yes\""}},
        {"tools", {"1", "[{\"type\":\"function\"}]"}}},
       is_ollama_error},
      {"/api/generate", R"({"model":"m","prompt":"hi","stream":false,"options":{"num_predict":4}})",
       {{"prompt", {"1", "{}"}}, {"suffix", {"\"x\""}}, {"context", {"[1,2]"}}, {"template", {"\"{{ .Prompt }}\""}},
        {"raw", {"\"x\""}}, {"images", {"[\"aGk=\"]"}}, {"system", {"1"}}, {"logprobs", {"true"}}},
       is_ollama_error},
      {"/api/show", R"({"model":"m"})", {{"model", {"1"}}}, is_ollama_error},
  };
}

TEST_F(HostileInput, EachApiAnswersBadInputInItsOwnErrorShape) {
  size_t checked = 0;
  for (const ApiCase& api : api_cases()) {
    std::vector<std::string> bodies;
    for (size_t n = 0; n < api.valid.size(); ++n) bodies.push_back(api.valid.substr(0, n));
    for (const std::string body : {"null", "[]", "42", "{'a':1}", "\xff"}) bodies.push_back(body);
    for (const auto& [field, values] : api.wrong)
      for (const std::string& v : values) {
        json body = json::parse(api.valid);
        body[field] = json::parse(v);
        bodies.push_back(body.dump());
      }
    for (const std::string& body : bodies) {
      RawConnection c(server_->port());
      c.send(post(api.path, body));
      const std::string response = c.read_response(10s);
      const int status = status_of(response);
      const json answer = json::parse(body_of(response), nullptr, false);
      EXPECT_TRUE(status >= 400 && status < 500 && api.is_own_error(answer))
          << api.path << " got: " << response.substr(0, 300) << "\nfor: " << body.substr(0, 300);
      ++checked;
    }
    // The HTTP layer's own errors under the API's path take its shape too.
    RawConnection c(server_->port());
    c.send("POST " + api.path + " HTTP/1.1\r\nHost: t\r\nContent-Length: 999999999\r\n\r\n");
    const std::string response = c.read_response(10s);
    EXPECT_EQ(status_of(response), 413);
    EXPECT_TRUE(api.is_own_error(json::parse(body_of(response), nullptr, false))) << response.substr(0, 300);
  }
  EXPECT_GT(checked, 250u);
  EXPECT_TRUE(healthy());
}

TEST_F(HostileInput, HugeBodiesAndACompressionBombAreRefusedBeforeMemoryGrows) {
  const ProcessUse before = process_use(server_->pid());
  {  // A 1 GiB chunked upload: refused once past the body limit, long before its end.
    RawConnection c(server_->port());
    c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string piece = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
    size_t sent = 0;
    std::string response;
    while (sent < (1ull << 30) && response.empty() && c.send(piece)) {
      sent += 0x10000;
      if (sent % (1u << 20) == 0) response = c.read_response(1ms);  // read the answer before the server closes
    }
    if (response.empty()) response = c.read_response(10s);
    EXPECT_LT(sent, 1ull << 30);
    EXPECT_EQ(status_of(response), 413) << response.substr(0, 300);
  }
  {  // A Content-Length of 1 GiB: refused on its head.
    RawConnection c(server_->port());
    c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Length: 1073741824\r\n\r\n");
    EXPECT_EQ(status_of(c.read_response(10s)), 413);
  }
  {  // 130 KB of gzip that would inflate to 128 MiB: never inflated.
    RawConnection c(server_->port());
    c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Encoding: gzip\r\nContent-Length: 133000\r\n\r\n" +
           std::string(133000, '\x1f'));
    EXPECT_EQ(status_of(c.read_response(10s)), 415);
  }
  const ProcessUse after = process_use(server_->pid());
  EXPECT_LE(after.peak_rss_kb, std::max(before.peak_rss_kb, before.rss_kb + (16u << 10)));
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer keeps freed memory in its quarantine
  EXPECT_LE(after.rss_kb, before.rss_kb + (2u << 10)) << "peak " << after.peak_rss_kb;  // the bodies' memory given back
#endif
  {  // A Range header on an API route changes nothing.
    RawConnection c(server_->port());
    c.send(post("/v1/chat/completions", kChat, "Range: bytes=0-1\r\n"));
    const std::string response = c.read_response(10s);
    EXPECT_EQ(status_of(response), 200);
    EXPECT_TRUE(json::parse(body_of(response), nullptr, false).is_object()) << response;
  }
}

TEST_F(HostileInput, SlowClientsDoNotHoldTheServer) {
  const ProcessUse before = process_use(server_->pid());
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 256; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server_->port()));
    slow.back()->send("POST /v1/chat/completions HTTP/1.1\r\nHo");
  }
  auto c = server_->client();
  for (int round = 0; round < 5; ++round) {
    EXPECT_TRUE(healthy()) << "round " << round;
    const JsonResponse r = post_json(c, "/v1/chat/completions", json::parse(kChat));
    EXPECT_EQ(r.status, 200) << r.text;
    for (auto& s : slow) s->send("s");
  }
  slow.clear();
  // Threads and descriptors back where they were once the server has seen them go.
  ProcessUse after;
  for (int i = 0; i < 200; ++i) {
    after = process_use(server_->pid());
    if (after.descriptors <= before.descriptors + 1) break;  // + the client's keep-alive connection
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_LE(after.descriptors, before.descriptors + 1);
  EXPECT_EQ(after.threads, before.threads);
}

TEST_F(HostileInput, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection c(server_->port());
  json second = json::parse(kChat);
  second["max_tokens"] = 2;
  c.send(post("/v1/chat/completions", kChat) + "GET /health HTTP/1.1\r\nHost: t\r\n\r\n" +
         post("/v1/chat/completions", second.dump()));
  const json first = json::parse(body_of(c.read_response(10s)), nullptr, false);
  EXPECT_EQ(body_of(c.read_response(10s)), R"({"status":"ok"})");
  const json third = json::parse(body_of(c.read_response(10s)), nullptr, false);
  ASSERT_TRUE(first.is_object() && third.is_object());
  EXPECT_EQ(first["usage"]["completion_tokens"], 4);
  EXPECT_EQ(third["usage"]["completion_tokens"], 2);
}

TEST_F(HostileInput, MassDisconnectsLeaveNothingBehind) {
  auto c = server_->client();
  ASSERT_EQ(post_json(c, "/v1/chat/completions", json::parse(kChat)).status, 200);
  const ProcessUse before = process_use(server_->pid());
  json stream = json::parse(kChat);
  stream["stream"] = true;
  stream["max_tokens"] = 200;
  for (int round = 0; round < 4; ++round) {
    std::vector<std::unique_ptr<RawConnection>> clients;
    for (int i = 0; i < 64; ++i) {
      clients.push_back(std::make_unique<RawConnection>(server_->port()));
      // Half leave mid-request, half mid-answer.
      const std::string request = post("/v1/chat/completions", stream.dump());
      clients.back()->send(i % 2 ? request.substr(0, request.size() / 2) : request);
    }
    std::this_thread::sleep_for(20ms);
    clients.clear();
    EXPECT_TRUE(healthy());
  }
  ProcessUse after;
  std::string metrics;
  eventually([&] {
    after = process_use(server_->pid());
    metrics = get(c, "/metrics").text;
    return after.descriptors <= before.descriptors && metric_sample(metrics, "nanoserve_requests_running") == 0;
  });
  EXPECT_LE(after.descriptors, before.descriptors);
  EXPECT_EQ(after.threads, before.threads);
  EXPECT_EQ(metric_sample(metrics, "nanoserve_requests_running"), 0) << metrics;
}

TEST_F(HostileInput, AReaderThatStopsReadingIsCancelledLikeOneThatLeft) {
  // Its own server: long generations, so that an unread stream outgrows every buffer on the way.
  server_->stop();
  server_ = std::make_unique<ServerProcess>(mock_server_args("--ctx 200000 --max-tokens 199000"));
  auto c = server_->client();
  const double cancelled_before = metric_sample(get(c, "/metrics").text, "nanoserve_request_cancellations_total");
  json stream = json::parse(kChat);
  stream["stream"] = true;
  stream["max_tokens"] = 199000;
  stream["temperature"] = 0;  // the mock's passage, never its end of text
  RawConnection reader(server_->port(), 4096);  // reads nothing from here on
  reader.send(post("/v1/chat/completions", stream.dump()));
  std::string metrics;
  for (int i = 0; i < 600; ++i) {  // up to a minute: sanitizer builds generate slowly
    metrics = get(c, "/metrics").text;
    if (metric_sample(metrics, "nanoserve_request_cancellations_total") > cancelled_before &&
        metric_sample(metrics, "nanoserve_requests_running") == 0)
      break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(metric_sample(metrics, "nanoserve_request_cancellations_total"), cancelled_before + 1) << metrics;
  EXPECT_EQ(metric_sample(metrics, "nanoserve_requests_running"), 0) << metrics;
  EXPECT_TRUE(healthy());
}

}  // namespace
}  // namespace nanoserve::test
