// Speculative decoding through the served API: the nanoserve stats object reports a request's
// steps, drafts and tokens per step; `speculative: false` opts out (no drafts, the same text);
// /metrics counts drafts and steps; --spec off drafts nothing.
#include <gtest/gtest.h>

#include <string>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

// Python whose continuation repeats what came before (prompt lookup finds it).
json completion_body() {
  std::string code;
  for (int i = 0; i < 6; ++i)
    code += "def get_" + std::to_string(i) + "(self):\n    return self.values[" + std::to_string(i) + "]\n\n";
  return {{"prompt", code + "def get_6(self):\n"}, {"max_tokens", 64}, {"ignore_eos", true}, {"temperature", 0}};
}

TEST(SpeculativeServe, StatsReportDraftsAndStepsAndARequestMayOptOut) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  ServerProcess server("-t 2 --model " + model);  // --spec lookup by default
  auto c = server.client();
  const JsonResponse on = post_json(c, "/v1/completions", completion_body());
  ASSERT_EQ(on.status, 200) << on.text;
  const json& s = on.body["nanoserve"];
  EXPECT_EQ(on.body["usage"]["completion_tokens"], 64);
  EXPECT_GT(s["draft_tokens"].get<int64_t>(), 0) << s.dump();
  EXPECT_GT(s["accepted_tokens"].get<int64_t>(), 0) << s.dump();
  EXPECT_EQ(s["accepted_tokens"].get<int64_t>() + s["decode_steps"].get<int64_t>(), 64) << s.dump();
  EXPECT_GT(s["tokens_per_step"].get<double>(), 1.0);
  EXPECT_GT(s["verify_steps"].get<int64_t>(), 0);
  EXPECT_GT(s["tokens_per_verify_step"].get<double>(), 1.0);

  json body = completion_body();
  body["speculative"] = false;
  body["cache_prompt"] = false;  // its first token computed, not chosen from the prefix cache's logits
  const JsonResponse off = post_json(c, "/v1/completions", body);
  ASSERT_EQ(off.status, 200) << off.text;
  EXPECT_EQ(off.body["choices"][0]["text"], on.body["choices"][0]["text"]);
  EXPECT_EQ(off.body["nanoserve"]["draft_tokens"], 0);
  EXPECT_EQ(off.body["nanoserve"]["decode_steps"], 64);
  EXPECT_EQ(off.body["nanoserve"]["tokens_per_step"], 1.0);

  body["speculative"] = "no";
  const JsonResponse refused = post_json(c, "/v1/completions", body);
  EXPECT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.body["error"]["param"], "speculative");

  const std::string metrics = get(c, "/metrics").text;
  EXPECT_EQ(metric_sample(metrics, "nanoserve_spec_draft_tokens_total"), s["draft_tokens"].get<double>());
  EXPECT_EQ(metric_sample(metrics, "nanoserve_spec_accepted_tokens_total"), s["accepted_tokens"].get<double>());
  EXPECT_EQ(metric_sample(metrics, "nanoserve_decode_step_tokens_total"), 128);
  EXPECT_EQ(metric_sample(metrics, "nanoserve_decode_steps_total"), s["decode_steps"].get<double>() + 64);
}

TEST(SpeculativeServe, SpecOffDraftsNothing) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  ServerProcess server("-t 2 --spec off --model " + model);
  auto c = server.client();
  const JsonResponse r = post_json(c, "/v1/completions", completion_body());
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["nanoserve"]["draft_tokens"], 0);
  EXPECT_EQ(metric_sample(get(c, "/metrics").text, "nanoserve_spec_draft_tokens_total"), 0);
}

}  // namespace
}  // namespace nanoserve::test
