// Served greedy text equals `nanoserve run`'s for the same model and prompt: the server
// adds nothing to and loses nothing from what the engine generates.
#include <gtest/gtest.h>

#include <memory>
#include <string>

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

}  // namespace
}  // namespace nanoserve::test
