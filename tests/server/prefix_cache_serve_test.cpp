// The prefix cache through the served API: usage.prompt_tokens_details.cached_tokens (OpenAI's
// field) and the nanoserve stats object report it, cache_prompt: false skips it, /metrics
// counts it, --prefix-cache off turns it off, and with --cache-dir a restarted server finds
// the blocks of a prompt it answered before. The text never changes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

// A conversation so far: about 300 tokens of Python, then a question.
json chat_body(bool cache_prompt = true) {
  std::string code;
  for (int i = 0; i < 12; ++i)
    code += "def handler_" + std::to_string(i) + "(request, retries=3):\n    return request.get('value', " +
            std::to_string(i) + ")\n\n";
  json body = {{"messages", {{{"role", "system"}, {"content", "You review Python code."}},
                             {{"role", "user"}, {"content", code + "What do these functions return?"}}}},
               {"max_tokens", 24},
               {"ignore_eos", true},  // 24 tokens each time: the positions computed are known
               {"temperature", 0}};
  if (!cache_prompt) body["cache_prompt"] = false;
  return body;
}

int64_t cached_tokens(const JsonResponse& r) { return r.body["usage"]["prompt_tokens_details"]["cached_tokens"]; }

// What a resend finds after `earlier` answered the same prompt: every position when the
// earlier answer filled the block that holds its last token (blocks of 16 are published when
// full; it computed its prompt and all its tokens but the last), the logits after the prompt
// being cached too; else the prompt's whole blocks.
bool last_block_filled(const JsonResponse& earlier) {
  const int64_t prompt = earlier.body["usage"]["prompt_tokens"], completion = earlier.body["usage"]["completion_tokens"];
  EXPECT_EQ(completion, 24);
  return prompt % 16 == 0 || (prompt + completion - 1) / 16 > prompt / 16;
}
int64_t expected_cached(const JsonResponse& earlier) {
  const int64_t prompt = earlier.body["usage"]["prompt_tokens"];
  return last_block_filled(earlier) ? prompt : prompt / 16 * 16;
}

TEST(PrefixCacheServe, AResendReportsItsCachedTokensAndAnswersTheSame) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  ServerProcess server("-t 2 --model " + model);
  auto c = server.client();
  const JsonResponse first = post_json(c, "/v1/chat/completions", chat_body());
  ASSERT_EQ(first.status, 200) << first.text;
  const int64_t prompt = first.body["usage"]["prompt_tokens"];
  ASSERT_GT(prompt, 200);
  EXPECT_EQ(cached_tokens(first), 0);
  EXPECT_EQ(first.body["nanoserve"]["cached_tokens"], 0);

  const JsonResponse again = post_json(c, "/v1/chat/completions", chat_body());
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(cached_tokens(again), expected_cached(first));
  EXPECT_EQ(again.body["nanoserve"]["cached_tokens"], expected_cached(first));
  EXPECT_EQ(again.body["choices"][0]["message"]["content"], first.body["choices"][0]["message"]["content"]);

  const JsonResponse skipped = post_json(c, "/v1/chat/completions", chat_body(false));
  ASSERT_EQ(skipped.status, 200) << skipped.text;
  EXPECT_EQ(cached_tokens(skipped), 0);
  EXPECT_EQ(skipped.body["choices"][0]["message"]["content"], first.body["choices"][0]["message"]["content"]);

  json wrong = chat_body();
  wrong["cache_prompt"] = "yes";
  const JsonResponse refused = post_json(c, "/v1/chat/completions", wrong);
  EXPECT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.body["error"]["param"], "cache_prompt");

  const std::string metrics = get(c, "/metrics").text;
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_lookups_total"), 2);
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_hit_tokens_total"), static_cast<double>(expected_cached(first)));
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_miss_tokens_total"),
            static_cast<double>(2 * prompt - expected_cached(first)));
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_logits_hits_total"), last_block_filled(first) ? 1 : 0);
  EXPECT_GT(metric_sample(metrics, "nanoserve_prefix_cache_blocks"), 0);
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_disk_blocks"), 0);
}

TEST(PrefixCacheServe, OffMeansNoCachedTokens) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  ServerProcess server("-t 2 --prefix-cache off --model " + model);
  auto c = server.client();
  ASSERT_EQ(post_json(c, "/v1/chat/completions", chat_body()).status, 200);
  const JsonResponse again = post_json(c, "/v1/chat/completions", chat_body());
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(cached_tokens(again), 0);
  EXPECT_EQ(metric_sample(get(c, "/metrics").text, "nanoserve_prefix_cache_lookups_total"), 0);
}

TEST(PrefixCacheServe, ARestartedServerFindsTheBlocksOnDisk) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  const std::string dir = temp_file("serve-cache-dir");
  std::string text;
  int64_t expected = 0;
  {
    ServerProcess server("-t 2 --cache-dir " + dir + " --cache-disk 64M --model " + model);
    auto c = server.client();
    const JsonResponse first = post_json(c, "/v1/chat/completions", chat_body());
    ASSERT_EQ(first.status, 200) << first.text;
    text = first.body["choices"][0]["message"]["content"];
    // From disk come the prompt's whole blocks (a block is found on disk by its chain of whole
    // blocks; the one the answer filled is found only while it is in the pool).
    const int64_t prompt = first.body["usage"]["prompt_tokens"];
    expected = prompt % 16 == 0 ? prompt - 1 : prompt / 16 * 16;
    EXPECT_EQ(server.stop(), 0);  // a clean stop finishes the disk writes
  }
  ServerProcess restarted("-t 2 --cache-dir " + dir + " --cache-disk 64M --model " + model);
  auto c = restarted.client();
  const JsonResponse again = post_json(c, "/v1/chat/completions", chat_body());
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["choices"][0]["message"]["content"], text);
  EXPECT_EQ(cached_tokens(again), expected);
  const std::string metrics = get(c, "/metrics").text;
  EXPECT_GT(metric_sample(metrics, "nanoserve_prefix_cache_disk_reads_total"), 0);
  EXPECT_EQ(metric_sample(metrics, "nanoserve_prefix_cache_disk_read_errors_total"), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nanoserve::test
