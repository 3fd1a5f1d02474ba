// The four APIs are one generation path: for the same prompt, seed and sampling, Anthropic's
// thinking and text blocks, the Responses API's reasoning and message items and Ollama's
// thinking and content are exactly OpenAI's reasoning_content and content, whole and streamed.
// The model is the golden Qwen3-vocabulary one (random weights); the server's --logit-bias makes
// its output a random run of <think> and </think>, so each seed splits differently. And a
// client that leaves any API's stream mid-answer cancels its generation.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

constexpr int kThink = 151667, kEndThink = 151668;  // Qwen3's <think> and </think>
const json kMessages = {{{"role", "user"}, {"content", "think"}}};

struct Split {
  std::string reasoning, content;
  bool operator==(const Split&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Split& s) {
  return os << "{reasoning: \"" << s.reasoning << "\", content: \"" << s.content << "\"}";
}

Split openai(httplib::Client& c, uint64_t seed) {
  const JsonResponse r = post_json(c, "/v1/chat/completions",
                                   {{"messages", kMessages}, {"max_tokens", 8}, {"temperature", 1}, {"seed", seed}});
  EXPECT_EQ(r.status, 200) << r.text;
  const json& m = r.body["choices"][0]["message"];
  return {m.value("reasoning_content", ""), m.value("content", "")};
}

Split anthropic(httplib::Client& c, uint64_t seed, bool stream) {
  const json body = {{"messages", kMessages}, {"max_tokens", 8}, {"temperature", 1}, {"seed", seed}, {"stream", stream}};
  const JsonResponse r = post_json(c, "/v1/messages", body);
  EXPECT_EQ(r.status, 200) << r.text;
  Split out;
  if (!stream) {
    for (const json& block : r.body["content"]) {
      if (block["type"] == "thinking") out.reasoning += block["thinking"];
      if (block["type"] == "text") out.content += block["text"];
    }
    return out;
  }
  for (size_t at = r.text.find("data: "); at != std::string::npos; at = r.text.find("data: ", at + 1)) {
    const json event = json::parse(r.text.substr(at + 6, r.text.find('\n', at) - at - 6));
    if (event["type"] != "content_block_delta") continue;
    out.reasoning += event["delta"].value("thinking", "");
    out.content += event["delta"].value("text", "");
  }
  return out;
}

Split responses(httplib::Client& c, uint64_t seed) {
  const JsonResponse r = post_json(c, "/v1/responses", {{"input", kMessages}, {"max_output_tokens", 8},
                                                        {"temperature", 1}, {"seed", seed}});
  EXPECT_EQ(r.status, 200) << r.text;
  Split out;
  for (const json& item : r.body["output"])
    for (const json& part : item["content"]) {
      if (part["type"] == "reasoning_text") out.reasoning += part["text"];
      if (part["type"] == "output_text") out.content += part["text"];
    }
  return out;
}

Split ollama(httplib::Client& c, uint64_t seed) {
  const JsonResponse r = post_json(c, "/api/chat", {{"model", "q"}, {"messages", kMessages}, {"stream", false},
                                                    {"options", {{"num_predict", 8}, {"temperature", 1}, {"seed", seed}}}});
  EXPECT_EQ(r.status, 200) << r.text;
  return {r.body["message"].value("thinking", ""), r.body["message"].value("content", "")};
}

TEST(ApiParity, EveryApiSplitsTheSameOutputTheSameWay) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf") +
                       " --logit-bias " + std::to_string(kThink) + "+100 --logit-bias " + std::to_string(kEndThink) +
                       "+100");
  auto c = server.client();
  int with_both = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const Split expected = openai(c, seed);
    if (!expected.reasoning.empty() && !expected.content.empty()) ++with_both;
    EXPECT_EQ(anthropic(c, seed, false), expected) << "seed " << seed;
    EXPECT_EQ(anthropic(c, seed, true), expected) << "seed " << seed;
    EXPECT_EQ(responses(c, seed), expected) << "seed " << seed;
    EXPECT_EQ(ollama(c, seed), expected) << "seed " << seed;
  }
  EXPECT_GT(with_both, 0);  // some seeds both think and answer
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// Each stream would take 40 s (2000 tokens of 20 ms): the client leaves long before its end
// however slowly it reads, and the waits for the server's counters are generous (sanitizers
// share two cores with other tests).
TEST(ApiParity, LeavingAnyApisStreamCancelsItsGeneration) {
  ServerProcess server("--engine mock --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf") +
                       " --mock-token-delay-us 20000");
  auto c = server.client();
  const std::vector<std::pair<std::string, json>> streams = {
      {"/v1/messages", {{"messages", kMessages}, {"max_tokens", 2000}, {"stream", true}}},
      {"/v1/responses", {{"input", "go"}, {"max_output_tokens", 2000}, {"stream", true}}},
      {"/api/chat", {{"model", "m"}, {"messages", kMessages}, {"options", {{"num_predict", 2000}}}}},
      {"/api/generate", {{"model", "m"}, {"prompt", "go"}, {"options", {{"num_predict", 2000}}}}},
  };
  double cancelled = 0;
  for (const auto& [path, body] : streams) {
    int pieces = 0;
    post_streaming(c, path, body, [&](const std::string&) { return ++pieces < 5; });
    EXPECT_EQ(pieces, 5) << path;
    // Each stream is one more cancellation, whatever became of the one before it.
    const double before = cancelled;
    double running = 1;
    std::string metrics;
    for (const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         std::chrono::steady_clock::now() < give_up && (cancelled < before + 1 || running != 0);) {
      metrics = get(c, "/metrics").text;
      cancelled = metric_sample(metrics, "nanoserve_request_cancellations_total");
      running = metric_sample(metrics, "nanoserve_requests_running");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(cancelled, before + 1) << path << "\n" << metrics << "\n" << server.log();
    EXPECT_EQ(running, 0) << path;
  }
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace nanoserve::test
