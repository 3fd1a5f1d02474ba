// Served greedy text equals `nanoserve run`'s for the same model and prompt: the server
// adds nothing to and loses nothing from what the engine generates.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;

// `nanoserve run` prints the text, then a newline.
std::string run_text(const std::string& args) {
  const CommandResult r = run_nanoserve("run " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  return r.out.substr(0, r.out.size() - 1);
}

TEST(GoldenServe, PycoderCompletionEqualsRun) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  const std::string prompt = "def fibonacci(n):";
  const std::string expected = run_text("-m " + model + " -p '" + prompt + "' -n 48 -t 2");
  ServerProcess server("--engine sequential -t 2 --model " + model);
  auto c = server.client();
  const json body = {{"prompt", prompt}, {"max_tokens", 48}, {"temperature", 0}};
  const JsonResponse whole = post_json(c, "/v1/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.text;
  EXPECT_EQ(whole.body["choices"][0]["text"], expected);

  json streaming = body;
  streaming["stream"] = true;
  EXPECT_EQ(streamed_text(sse_payloads(post_json(c, "/v1/completions", streaming).text)), expected);
}

// The tiny golden qwen3 carries a minimal ChatML template, the same turn `run --chat` builds.
TEST(GoldenServe, TinyQwen3ChatEqualsRunChat) {
  const std::string model = shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  const std::string user = "the license";
  const std::string expected = run_text("--chat -m " + model + " -p '" + user + "' -n 32 -t 2");
  ServerProcess server("--engine sequential -t 2 --model " + model);
  auto c = server.client();
  const json body = {{"messages", {{{"role", "user"}, {"content", user}}}}, {"max_tokens", 32}, {"temperature", 0}};
  const JsonResponse whole = post_json(c, "/v1/chat/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.text;
  EXPECT_EQ(whole.body["choices"][0]["message"]["content"], expected);

  json streaming = body;
  streaming["stream"] = true;
  EXPECT_EQ(streamed_text(sse_payloads(post_json(c, "/v1/chat/completions", streaming).text)), expected);
}

// The batch engine (the default) serves the same greedy text as `nanoserve run`, alone and
// with other requests beside it; the engine's stats name the KV blocks the request held.
TEST(GoldenServe, BatchEngineServesRunsTextAloneAndTogether) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  const std::vector<std::string> prompts = {"def fibonacci(n):", "class Stack:", "import os\n\n", "for i in range("};
  std::vector<std::string> expected;
  for (const std::string& p : prompts) expected.push_back(run_text("-m " + model + " -p '" + p + "' -n 40 -t 2"));
  ServerProcess server("-t 2 --parallel 4 --step-tokens 8 --model " + model);
  auto c = server.client();
  auto body = [&](size_t i) { return json{{"prompt", prompts[i]}, {"max_tokens", 40}, {"temperature", 0}}; };
  const JsonResponse alone = post_json(c, "/v1/completions", body(0));
  ASSERT_EQ(alone.status, 200) << alone.text;
  EXPECT_EQ(alone.body["choices"][0]["text"], expected[0]);
  EXPECT_GE(alone.body["nanoserve"]["kv_blocks"], 1);
  EXPECT_GT(alone.body["nanoserve"]["kv_peak_bytes"], 0);

  std::vector<std::string> got(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i)
    clients.emplace_back([&, i] {
      auto ci = server.client();
      json streaming = body(i);
      streaming["stream"] = true;
      got[i] = streamed_text(sse_payloads(post_json(ci, "/v1/completions", streaming).text));
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(got, expected);
  EXPECT_NE(server.log().find("batch engine serving"), std::string::npos);
}

// `run` is a client of the same engines, prompt rules and request options as the server:
// stop strings, logit_bias, max_tokens and the chat template mean the same in both, and the
// sequential and batch engines give `run` the same greedy text.
TEST(GoldenServe, RunAndServeGiveTheSameTextForTheSameOptions) {
  const std::string model = shared_path("models/pycoder/pycoder-q8_0.gguf");
  const std::string prompt = "def fibonacci(n):\n";  // greedy: "    return _get_end((1000..."
  const std::string quoted = "-p 'def fibonacci(n):\n'";
  const std::string return_id = "334";  // "return" in "    return" (tokenize: [258, 334])
  ServerProcess server("-t 2 --model " + model);
  auto c = server.client();
  auto served = [&](json body) {
    body["temperature"] = 0;
    const JsonResponse r = post_json(c, "/v1/completions", body);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body["choices"][0]["text"].get<std::string>();
  };

  const std::string plain = served({{"prompt", prompt}, {"max_tokens", 24}});
  EXPECT_EQ(run_text("-m " + model + " " + quoted + " -n 24 -t 2"), plain);
  EXPECT_EQ(run_text("-m " + model + " " + quoted + " -n 24 -t 2 --engine sequential"), plain);

  // The stop string is in the plain text, so the stopped text is the plain text up to it.
  const size_t stop_at = plain.find("_get");
  ASSERT_NE(stop_at, std::string::npos) << plain;
  const std::string stopped = served({{"prompt", prompt}, {"max_tokens", 24}, {"stop", {"_get"}}});
  EXPECT_EQ(stopped, plain.substr(0, stop_at));
  EXPECT_EQ(run_text("-m " + model + " " + quoted + " -n 24 -t 2 --stop _get"), stopped);

  const std::string banned = served({{"prompt", prompt}, {"max_tokens", 24}, {"logit_bias", {{return_id, -100}}}});
  EXPECT_NE(banned, plain);
  EXPECT_EQ(run_text("-m " + model + " " + quoted + " -n 24 -t 2 --logit-bias " + return_id + "=-100"), banned);

  const json chat = {{"messages", {{{"role", "user"}, {"content", "write a function"}}}}, {"max_tokens", 16},
                     {"temperature", 0}};
  const JsonResponse r = post_json(c, "/v1/chat/completions", chat);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(run_text("--chat -m " + model + " -p 'write a function' -n 16 -t 2"),
            r.body["choices"][0]["message"]["content"]);
}

}  // namespace
}  // namespace nanoserve::test
