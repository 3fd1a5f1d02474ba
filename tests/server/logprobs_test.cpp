// logprobs on both endpoints, served: the values are the log-softmax of the model's logits
// (checked against llama.cpp's logits for the golden tiny llama), the greedy token is the most
// likely, a stream carries the same entries as the whole answer, and under a response_format
// the distribution is the one the grammar allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

// The golden log-softmax at the last position of the tiny llama's sequence `s`, best first.
std::vector<double> golden_last_logprobs(const json& golden, size_t s, double& logit_range) {
  const json& seq = golden["sequences"][s];
  const auto n_vocab = golden["n_vocab"].get<size_t>();
  const std::string bin = read_file(shared_path("golden/models/tiny-llama-F16.bin"));
  const size_t row = seq["bin_offset_floats"].get<size_t>() + (seq["logit_positions"].size() - 1) * n_vocab;
  std::vector<float> logits(n_vocab);
  std::memcpy(logits.data(), bin.data() + row * sizeof(float), n_vocab * sizeof(float));
  const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
  logit_range = *hi - *lo;
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - *hi));
  std::vector<double> out;
  for (float l : logits) out.push_back(l - *hi - std::log(sum));
  std::sort(out.rbegin(), out.rend());
  return out;
}

TEST(Logprobs, CompletionLogprobsAreTheLogSoftmaxOfTheModelsLogits) {
  const json golden = json::parse(read_file(shared_path("golden/models/tiny-llama-F16.json")));
  ServerProcess server("--engine sequential -t 2 --model " + shared_path("golden/models/tiny-llama-F16.gguf"));
  auto c = server.client();
  int checked = 0;
  for (size_t s = 0; s < golden["sequences"].size(); ++s) {
    const json& seq = golden["sequences"][s];
    if (seq["n_tokens"].get<int>() > 32) continue;  // every position's logits are stored for these
    double range = 0;
    const std::vector<double> want = golden_last_logprobs(golden, s, range);
    const JsonResponse r = post_json(c, "/v1/completions", {{"prompt", seq["input_ids"]}, {"max_tokens", 1},
                                                            {"temperature", 0}, {"logprobs", 5}});
    ASSERT_EQ(r.status, 200) << r.text;
    const json& lp = r.body["choices"][0]["logprobs"];
    ASSERT_EQ(lp["tokens"].size(), 1u) << lp;
    std::vector<double> got;
    for (const auto& [token, logprob] : lp["top_logprobs"][0].items()) got.push_back(logprob.get<double>());
    std::sort(got.rbegin(), got.rend());
    // Five alternatives, keyed by their text: two tokens of one text (pieces of a character)
    // share a key, so there may be fewer.
    ASSERT_GE(got.size(), 1u) << lp;
    ASSERT_LE(got.size(), 5u) << lp;
    // A logprob is off by at most the logit's error and the normalizer's: twice the F16 bound.
    const double tolerance = 2 * 3e-3 * range;
    EXPECT_NEAR(got[0], want[0], tolerance) << "sequence " << s;
    for (double g : got)
      EXPECT_TRUE(std::any_of(want.begin(), want.begin() + 5, [&](double w) { return std::abs(g - w) <= tolerance; }))
          << "sequence " << s << ": " << g << " is none of the golden top 5";
    EXPECT_NEAR(lp["token_logprobs"][0].get<double>(), want[0], tolerance);  // greedy: the best
    EXPECT_EQ(lp["text_offset"], json::array({0}));
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

json chat_body(json extra) {
  json body = {{"messages", {{{"role", "user"}, {"content", "the license"}}}}, {"max_tokens", 12}, {"temperature", 0},
               {"logprobs", true}, {"top_logprobs", 3}};
  for (const auto& [key, value] : extra.items()) body[key] = value;
  return body;
}

TEST(Logprobs, ChatEntriesNameTheGreedyTokenFirstAndAStreamCarriesTheSame) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  auto c = server.client();
  const JsonResponse whole = post_json(c, "/v1/chat/completions", chat_body(json::object()));
  ASSERT_EQ(whole.status, 200) << whole.text;
  const json& content = whole.body["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 12u);
  std::string text;
  for (const json& e : content) {
    ASSERT_EQ(e["top_logprobs"].size(), 3u);
    EXPECT_EQ(e["top_logprobs"][0]["token"], e["token"]);  // greedy
    EXPECT_EQ(e["top_logprobs"][0]["logprob"], e["logprob"]);
    EXPECT_LE(e["logprob"].get<double>(), 0.0);
    EXPECT_GE(e["top_logprobs"][0]["logprob"].get<double>(), e["top_logprobs"][1]["logprob"].get<double>());
    std::string bytes;
    for (const json& b : e["bytes"]) bytes += static_cast<char>(b.get<int>());
    text += bytes;
  }
  // The content is the same bytes, with pieces of characters replaced (U+FFFD) as JSON needs.
  EXPECT_EQ(json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace)),
            whole.body["choices"][0]["message"]["content"]);

  json streaming = chat_body({{"stream", true}});
  json streamed = json::array();
  for (const std::string& payload : sse_payloads(post_json(c, "/v1/chat/completions", streaming).text)) {
    if (payload == "[DONE]") continue;
    const json chunk = json::parse(payload);
    if (chunk["choices"].empty() || chunk["choices"][0]["logprobs"].is_null()) continue;
    for (const json& e : chunk["choices"][0]["logprobs"]["content"]) streamed.push_back(e);
  }
  EXPECT_EQ(streamed, content);

  // Without logprobs: null, as before.
  const JsonResponse plain = post_json(c, "/v1/chat/completions", chat_body({{"logprobs", false}, {"top_logprobs", nullptr}}));
  EXPECT_TRUE(plain.body["choices"][0]["logprobs"].is_null()) << plain.text;
}

TEST(Logprobs, UnderAResponseFormatOnlyWhatTheGrammarAllowsHasProbability) {
  ServerProcess server("-t 2 --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  auto c = server.client();
  const JsonResponse r = post_json(
      c, "/v1/chat/completions",
      chat_body({{"max_tokens", 3}, {"top_logprobs", 5}, {"response_format", {{"type", "json_object"}}}}));
  ASSERT_EQ(r.status, 200) << r.text;
  const json& first = r.body["choices"][0]["logprobs"]["content"][0];
  double total = 0;
  for (const json& alt : first["top_logprobs"]) {
    EXPECT_EQ(alt["token"].get<std::string>().substr(0, 1), "{") << first;  // a JSON object starts so
    total += std::exp(alt["logprob"].get<double>());
  }
  EXPECT_LE(total, 1.0 + 1e-6);
}

TEST(Logprobs, BadFieldsAre400) {
  ServerProcess server("--engine mock --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  auto c = server.client();
  for (const json& bad : {json{{"top_logprobs", 2}}, json{{"logprobs", true}, {"top_logprobs", 21}},
                          json{{"logprobs", "yes"}}}) {
    json body = {{"messages", {{{"role", "user"}, {"content", "x"}}}}};
    body.update(bad);
    const JsonResponse r = post_json(c, "/v1/chat/completions", body);
    EXPECT_EQ(r.status, 400) << bad;
  }
  const JsonResponse r = post_json(c, "/v1/completions", {{"prompt", "x"}, {"logprobs", 6}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["param"], "logprobs");
}

}  // namespace
}  // namespace nanoserve::test
