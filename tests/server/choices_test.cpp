// n > 1: n choices from one prompt, each its own sequence with seed, seed + 1, ...; the
// prompt is prefilled once (the others find its blocks and the logits after them in the prefix
// cache); streamed, each delta names its choice's index.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

json body(json extra) {
  json b = {{"messages", {{{"role", "user"}, {"content", "the license"}}}}, {"max_tokens", 10}, {"temperature", 1},
            {"seed", 5}};
  for (const auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

TEST(Choices, EachChoiceIsTheRequestWithItsOwnSeedAndThePromptIsPrefilledOnce) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  auto c = server.client();
  // A prompt of ~150 tokens: the later choices find all its whole KV blocks (16 positions each)
  // in the prefix cache and compute only the part of the last block.
  std::string long_text;
  for (int i = 0; i < 15; ++i) long_text += "the license is granted to any person ";
  auto misses = [&] { return metric_sample(get(c, "/metrics").text, "nanoserve_prefix_cache_miss_tokens_total"); };
  const double misses_before = misses();
  const JsonResponse shared = post_json(
      c, "/v1/chat/completions", body({{"n", 3}, {"messages", {{{"role", "user"}, {"content", long_text}}}}}));
  ASSERT_EQ(shared.status, 200) << shared.text;
  const int prompt_tokens = shared.body["usage"]["prompt_tokens"];
  EXPECT_GT(prompt_tokens, 100);
  EXPECT_LE(misses() - misses_before, prompt_tokens + 2 * 16);  // not 3 × prompt_tokens

  const JsonResponse three = post_json(c, "/v1/chat/completions", body({{"n", 3}}));
  ASSERT_EQ(three.status, 200) << three.text;
  const json& choices = three.body["choices"];
  ASSERT_EQ(choices.size(), 3u);
  int completion_tokens = 0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(choices[i]["index"], i);
    const JsonResponse alone = post_json(c, "/v1/chat/completions", body({{"seed", 5 + i}}));
    ASSERT_EQ(alone.status, 200) << alone.text;
    EXPECT_EQ(choices[i]["message"]["content"], alone.body["choices"][0]["message"]["content"]) << i;
    completion_tokens += alone.body["usage"]["completion_tokens"].get<int>();
  }
  EXPECT_NE(choices[0]["message"]["content"], choices[1]["message"]["content"]);
  EXPECT_EQ(three.body["usage"]["completion_tokens"], completion_tokens);

  std::vector<std::string> streamed(3);
  std::vector<std::string> finishes(3);
  for (const std::string& payload : sse_payloads(post_json(c, "/v1/chat/completions",
                                                           body({{"n", 3}, {"stream", true}})).text)) {
    if (payload == "[DONE]") continue;
    const json chunk = json::parse(payload);
    for (const json& choice : chunk["choices"]) {
      const size_t i = choice["index"];
      streamed.at(i) += choice["delta"].value("content", "");
      if (choice["finish_reason"].is_string()) finishes[i] = choice["finish_reason"];
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(streamed[i], choices[i]["message"]["content"]) << i;
    EXPECT_EQ(finishes[i], choices[i]["finish_reason"]) << i;
  }

  const JsonResponse completions = post_json(c, "/v1/completions", {{"prompt", "abc"}, {"n", 2}, {"max_tokens", 4}});
  ASSERT_EQ(completions.status, 200) << completions.text;
  EXPECT_EQ(completions.body["choices"].size(), 2u);
  EXPECT_EQ(completions.body["choices"][1]["index"], 1);
  for (const int bad : {0, 17}) {
    const JsonResponse r = post_json(c, "/v1/chat/completions", body({{"n", bad}}));
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.body["error"]["param"], "n");
  }
}

}  // namespace
}  // namespace nanoserve::test
