// A thinking model's chat answer, served: its <think>...</think> goes to reasoning_content
// (delta.reasoning_content when streamed), reasoning_format "none" keeps it inline, and the
// two hold the same tokens. The model is the golden Qwen3-vocabulary one (random weights):
// logit_bias makes its output a random run of <think> and </think> for a given seed.
#include <gtest/gtest.h>

#include <string>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

constexpr int kThink = 151667, kEndThink = 151668;  // Qwen3's <think> and </think>

json body(uint64_t seed, json extra = json::object()) {
  json b = {{"messages", {{{"role", "user"}, {"content", "think"}}}}, {"max_tokens", 8}, {"temperature", 1},
            {"seed", seed}, {"logit_bias", {{std::to_string(kThink), 100}, {std::to_string(kEndThink), 100}}}};
  for (const auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

TEST(ReasoningServe, ThinkingGoesToReasoningContentAndStaysInlineOnRequest) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/qwen3vocab-qwen3-Q8_0.gguf"));
  auto c = server.client();
  int checked = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const JsonResponse raw = post_json(c, "/v1/chat/completions", body(seed, {{"reasoning_format", "none"}}));
    ASSERT_EQ(raw.status, 200) << raw.text;
    const std::string text = raw.body["choices"][0]["message"]["content"];
    EXPECT_FALSE(raw.body["choices"][0]["message"].contains("reasoning_content"));
    const size_t close = text.find("</think>");
    if (!text.starts_with("<think>") || close == std::string::npos) continue;  // this seed opened no thought

    const JsonResponse split = post_json(c, "/v1/chat/completions", body(seed));
    ASSERT_EQ(split.status, 200) << split.text;
    const json& message = split.body["choices"][0]["message"];
    EXPECT_EQ(message.value("reasoning_content", ""), text.substr(7, close - 7)) << text;
    EXPECT_EQ(message["content"], text.substr(close + 8)) << text;

    std::string reasoning, content;
    for (const std::string& payload : sse_payloads(post_json(c, "/v1/chat/completions", body(seed, {{"stream", true}})).text)) {
      if (payload == "[DONE]") continue;
      const json chunk = json::parse(payload);
      if (chunk["choices"].empty()) continue;
      const json& delta = chunk["choices"][0]["delta"];
      reasoning += delta.value("reasoning_content", "");
      content += delta.value("content", "");
    }
    EXPECT_EQ(reasoning, message.value("reasoning_content", ""));
    EXPECT_EQ(content, message["content"]);
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(post_json(c, "/v1/chat/completions", body(1, {{"reasoning_format", "loud"}})).status, 400);
}

}  // namespace
}  // namespace nanoserve::test
