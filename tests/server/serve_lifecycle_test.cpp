// Behaviour of a served process over time: a client that leaves cancels its generation, a
// full queue answers 429 at once, the API key, /health while the model loads, shutdown.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/run_nanoserve.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json long_stream() {
  return {{"messages", {{{"role", "user"}, {"content", "Go on."}}}}, {"max_tokens", 500}, {"stream", true}};
}

// The value of an unlabelled sample in a /metrics text; -1 when absent.
double metric(ServerProcess& server, const std::string& name) {
  auto c = server.client();
  auto res = c.Get("/metrics");
  return res ? metric_sample(res->body, name) : -1;
}

// Polls until `metric(name) == value`; false if it is not so within `timeout`. The timeouts
// here are generous (sanitizers share two cores with other tests): these tests hold the
// server to what happens, not how fast.
bool metric_reaches(ServerProcess& server, const std::string& name, double value,
                    std::chrono::milliseconds timeout = 60s) {
  for (const auto give_up = std::chrono::steady_clock::now() + timeout; metric(server, name) != value;) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

TEST(ServeLifecycle, ClientDisconnectCancelsTheGeneration) {
  ServerProcess server(mock_server_args("--mock-token-delay-us 20000"));  // 500 tokens: 10 s unless cancelled
  auto c = server.client();
  int chunks = 0;
  const int status = post_streaming(c, "/v1/chat/completions", long_stream(), [&](const std::string&) {
    return ++chunks < 4;  // leave after a few events
  });
  EXPECT_EQ(status, 0);  // the client cancelled
  EXPECT_TRUE(metric_reaches(server, "nanoserve_request_cancellations_total", 1));
  EXPECT_TRUE(metric_reaches(server, "nanoserve_requests_running", 0));
  // It ended as a cancellation, long before its 500 tokens.
  EXPECT_LT(metric(server, "nanoserve_generation_tokens_total"), 500);
  EXPECT_EQ(get(c, "/health").status, 200);
  EXPECT_NO_THROW(server.wait_for_log("cancelled (client disconnected)", 60s));
  EXPECT_EQ(server.stop(), 0);
}

TEST(ServeLifecycle, FullQueueAnswers429AtOnce) {
  ServerProcess server(mock_server_args("--parallel 1 --max-queue 1 --mock-token-delay-us 20000"));
  std::atomic<bool> leave{false};
  auto stream_until_told = [&] {
    auto c = server.client();
    post_streaming(c, "/v1/chat/completions", long_stream(), [&](const std::string&) { return !leave.load(); });
  };
  std::thread running(stream_until_told);
  ASSERT_TRUE(metric_reaches(server, "nanoserve_requests_running", 1));
  std::thread queued(stream_until_told);
  ASSERT_TRUE(metric_reaches(server, "nanoserve_requests_waiting", 1));

  // At once: the two streams above never end until told to, so a request that queued behind
  // them would never be answered (the client gives up after its read timeout).
  auto c = server.client();
  const JsonResponse full = post_json(c, "/v1/chat/completions", long_stream());
  EXPECT_EQ(full.status, 429) << full.text;
  EXPECT_EQ(full.body["error"]["type"], "rate_limit_error");
  EXPECT_TRUE(full.body["error"]["message"].is_string());
  leave = true;
  running.join();
  queued.join();
  EXPECT_TRUE(metric_reaches(server, "nanoserve_request_cancellations_total", 2));
}

TEST(ServeLifecycle, ApiKeyGuardsEveryRouteButHealth) {
  ServerProcess server(mock_server_args("--api-key s3cret"));
  auto c = server.client();
  EXPECT_EQ(get(c, "/health").status, 200);
  for (const char* path : {"/v1/models", "/metrics"}) {
    const JsonResponse r = get(c, path);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_EQ(r.body["error"]["code"], "invalid_api_key") << path;
  }
  const json body = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}};
  EXPECT_EQ(post_json(c, "/v1/chat/completions", body).status, 401);
  c.set_bearer_token_auth("wrong");
  EXPECT_EQ(get(c, "/v1/models").status, 401);
  c.set_bearer_token_auth("s3cret");
  EXPECT_EQ(get(c, "/v1/models").status, 200);
  EXPECT_EQ(post_json(c, "/v1/chat/completions", body).status, 200);
}

TEST(ServeLifecycle, EnvironmentVariablesConfigureIt) {
  setenv("NANOSERVE_API_KEY", "from-env", 1);
  ServerProcess server(mock_server_args(""));
  unsetenv("NANOSERVE_API_KEY");
  auto c = server.client();
  EXPECT_EQ(get(c, "/v1/models").status, 401);
  c.set_bearer_token_auth("from-env");
  EXPECT_EQ(get(c, "/v1/models").status, 200);
}

TEST(ServeLifecycle, AModelThatCannotLoadEndsTheProcess) {
  const CommandResult r = run_nanoserve("serve --host 127.0.0.1 --port 0 --model /nonexistent.gguf");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent.gguf"), std::string::npos) << r.err;
  const CommandResult sequential_parallel = run_nanoserve("serve --port 0 --engine sequential --parallel 2");
  EXPECT_NE(sequential_parallel.status, 0);
  EXPECT_NE(sequential_parallel.err.find("--parallel must be 1"), std::string::npos) << sequential_parallel.err;
}

// The batch engine's flags: sizes with suffixes, bounds, and refusals where they would be ignored.
TEST(ServeLifecycle, BatchFlagsAreHonouredOrRefused) {
  const std::string tiny = shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  ServerProcess server("--model " + tiny + " -t 1 --parallel 2 --kv-memory 1M --step-tokens 16 --kv-type f16");
  const std::string log = server.log();
  // tiny-qwen3: 4 layers, 2 KV heads of 64: 2 KiB per position, 32 KiB per block of 16.
  EXPECT_NE(log.find("KV cache: 32 blocks of 32768 bytes (1.0 MiB, f16)"), std::string::npos) << log;
  EXPECT_EQ(metric(server, "nanoserve_kv_cache_capacity_bytes"), 1 << 20);
  EXPECT_EQ(metric(server, "nanoserve_kv_cache_blocks"), 32);
  auto c = server.client();
  EXPECT_EQ(get(c, "/v1/models").status, 200);
  // 512 positions in the pool: a request must fit them.
  const json too_long = {{"prompt", "hello"}, {"max_tokens", 600}};
  const JsonResponse refused = post_json(c, "/v1/completions", too_long);
  EXPECT_EQ(refused.status, 400) << refused.text;
  EXPECT_EQ(refused.body["error"]["code"], "context_length_exceeded");

  const std::pair<const char*, const char*> refusals[] = {
      {"--engine sequential --kv-memory 64M", "apply to --engine batch only"},
      {"--engine mock --step-tokens 64", "apply to --engine batch only"},
      {"--parallel 8 --step-tokens 4", "must be at least --parallel"},
      {"--kv-memory 1K", "less than one block"},
      {"--kv-memory 100000T", "at most this machine's memory"},
      {"--parallel 100000", "--parallel must be between 1 and"},
      {"--kv-type q4_0", "--kv-type: q4_0 not in {f16,q8_0}"},
      {"--engine mock --kv-type q8_0", "--kv-type applies to the batch and sequential engines"}};
  for (const auto& [flags, message] : refusals) {
    const CommandResult r = run_nanoserve("serve --host 127.0.0.1 --port 0 --model " + tiny + " " + flags);
    EXPECT_NE(r.status, 0) << flags;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags << ": " << r.err;
  }
}

// --kv-type q8_0: the same --kv-memory holds 1.88 times the positions (68 bytes per 64 values
// instead of 128), and the completion that did not fit the F16 pool fits this one.
TEST(ServeLifecycle, AQ8_0KvCacheHoldsMorePositionsInTheSameMemory) {
  const std::string tiny = shared_path("golden/models/tiny-qwen3-Q8_0.gguf");
  ServerProcess server("--model " + tiny + " -t 1 --parallel 2 --kv-memory 1M --step-tokens 16 --kv-type q8_0");
  const std::string log = server.log();
  // 4 layers x 2 KV heads x (K, V) x 68 bytes = 1088 bytes per position, 17408 per block of 16.
  EXPECT_NE(log.find("KV cache: 60 blocks of 17408 bytes (1.0 MiB, q8_0)"), std::string::npos) << log;
  EXPECT_EQ(metric(server, "nanoserve_kv_cache_blocks"), 60);
  auto c = server.client();
  const json request = {{"prompt", "hello"}, {"max_tokens", 600}, {"ignore_eos", true}};
  const JsonResponse fits = post_json(c, "/v1/completions", request);
  ASSERT_EQ(fits.status, 200) << fits.text;
  EXPECT_EQ(fits.body["usage"]["completion_tokens"], 600);
  EXPECT_EQ(fits.body["choices"][0]["finish_reason"], "length");
}

// Without --model, and when the default model can be neither found in the cache nor pulled
// (here the Hub is a port nothing listens on: port 1 takes root to bind), serve says why and
// writes a small random-weight model to the cache first: /health says "loading" (503)
// meanwhile, and the API answers 503 too.
TEST(ServeLifecycle, DemoModelHealthLoadingThenReady) {
  const std::string cache = test::temp_file("demo-cache");
  std::filesystem::remove_all(cache);
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
  ServerProcess server("-t 2", /*wait_until_healthy=*/false);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HF_ENDPOINT");
  auto c = server.client();
  const JsonResponse loading = get(c, "/health");
  EXPECT_EQ(loading.status, 503);
  EXPECT_EQ(loading.body, json({{"status", "loading"}}));
  const JsonResponse early = post_json(c, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  EXPECT_EQ(early.status, 503);
  EXPECT_EQ(early.body["error"]["code"], "model_loading");

  server.wait_until_ready(120s);
  const std::string log = server.log();
  for (const char* said : {"the default model Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0 is not in the cache and could not "
                           "be pulled: cannot reach http://127.0.0.1:1: could not connect",
                           "nanoserve pull Qwen/Qwen2.5-0.5B-Instruct-GGUF", "RANDOM weights"})
    EXPECT_NE(log.find(said), std::string::npos) << said << " not in\n" << log;
  EXPECT_TRUE(std::filesystem::exists(cache + "/nanoserve/nanoserve-demo-qwen3-Q8_0.gguf"));
  EXPECT_EQ(get(c, "/v1/models").body["data"][0]["id"], "nanoserve-demo");
  const JsonResponse r = post_json(
      c, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}, {"ignore_eos", true}});
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["usage"]["completion_tokens"], 4);
  EXPECT_EQ(server.stop(), 0);
  std::filesystem::remove_all(cache);
}

}  // namespace
}  // namespace nanoserve::test
