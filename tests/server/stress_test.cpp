// Stress, on loopback only: 64 concurrent clients send completions with random prompt
// lengths, max_tokens, sampling and streaming, and abort some streams at random, for
// NANOSERVE_STRESS_SECONDS (default 15) against the mock engine and against the batch engine
// on a small synthetic model with a KV pool tight enough to preempt. Every response that was
// not aborted must be complete; at the end /metrics must balance (nothing running or waiting,
// every KV block back in the pool) and the server must exit cleanly (under ASan: no leak).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"
#include "support/run_nanoserve.h"
#include "support/eventually.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 64;
constexpr int kMaxPromptBytes = 600;  // the synth model's vocabulary is bytes: tokens <= bytes
constexpr int kMaxTokens = 300;
constexpr int kContext = 1024;        // > kMaxPromptBytes + kMaxTokens: every request fits

std::chrono::seconds stress_duration() {
  const char* env = std::getenv("NANOSERVE_STRESS_SECONDS");
  const int seconds = env && *env ? std::atoi(env) : 15;
  return std::chrono::seconds(std::max(1, seconds));
}

struct Tally {
  std::atomic<int64_t> completed{0}, aborted{0}, refused{0}, tokens{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  void fail(const std::string& what) {
    std::lock_guard lock(mutex);
    if (failures.size() < 20) failures.push_back(what);
  }
};

std::string random_text(std::mt19937_64& rng, int bytes) {
  static const std::string words[] = {"the ", "lighthouse ", "keeper ", "def ", "return ", "x = 1\n", "while ",
                                      "sea, ", "and ", "42 ", "é ", "λ ", "(", ") ", "{ ", "} "};
  std::string out;
  while (static_cast<int>(out.size()) < bytes) out += words[rng() % std::size(words)];
  return out;
}

// Checks one finished choice: a finish reason, and usage that fits what was asked.
void check_finish(Tally& t, const json& usage, const std::string& finish, int max_tokens, const std::string& where) {
  const int completion = usage.value("completion_tokens", -1);
  if (finish != "stop" && finish != "length") return t.fail(where + ": finish_reason " + finish);
  if (completion < 1 || completion > max_tokens)
    return t.fail(where + ": completion_tokens " + std::to_string(completion) + " of " + std::to_string(max_tokens));
  if (finish == "length" && completion != max_tokens) return t.fail(where + ": length before max_tokens");
  t.tokens += completion;
  ++t.completed;
}

void one_request(httplib::Client& c, std::mt19937_64& rng, Tally& t) {
  const int prompt_bytes = 1 + static_cast<int>(rng() % kMaxPromptBytes);
  const int max_tokens = 1 + static_cast<int>(rng() % kMaxTokens);
  json body = {{"prompt", random_text(rng, prompt_bytes)}, {"max_tokens", max_tokens}};
  if (rng() % 2) {
    body["temperature"] = 0.8;
    body["seed"] = rng() % 1000;
  } else {
    body["temperature"] = 0;
  }
  const bool oversized = rng() % 25 == 0;  // more than the context holds: refused at once
  if (oversized) body["max_tokens"] = 4 * kContext;

  if (rng() % 3 == 0 && !oversized) {  // whole response
    const JsonResponse r = post_json(c, "/v1/completions", body);
    if (r.status != 200) return t.fail("whole: status " + std::to_string(r.status) + " " + r.text);
    check_finish(t, r.body["usage"], r.body["choices"][0].value("finish_reason", ""), max_tokens, "whole");
    return;
  }
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  // A quarter of the streams leave after a few pieces.
  const int abort_after = rng() % 4 == 0 && !oversized ? 1 + static_cast<int>(rng() % 6) : -1;
  std::string received;
  int pieces = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    received.append(data, size);
    return abort_after < 0 || ++pieces < abort_after;
  };
  const auto started = Clock::now();
  const httplib::Result res = c.send(req);
  const int status = res ? res->status : 0;
  if (!res && abort_after < 0)
    return t.fail("stream: " + httplib::to_string(res.error()) + " after " +
                  std::to_string(std::chrono::duration<double>(Clock::now() - started).count()) + " s, " +
                  std::to_string(received.size()) + " bytes received");
  if (oversized) {
    if (status == 400) ++t.refused;
    else t.fail("oversized: status " + std::to_string(status));
    return;
  }
  if (abort_after >= 0 && status == 0) return void(++t.aborted);
  if (status != 200) return t.fail("stream: status " + std::to_string(status));
  std::vector<std::string> payloads;
  try {
    payloads = sse_payloads(received);
  } catch (const std::exception& e) {
    return t.fail(std::string("stream framing: ") + e.what());
  }
  if (payloads.size() < 3 || payloads.back() != "[DONE]") return t.fail("stream: no [DONE]");
  const json usage = json::parse(payloads[payloads.size() - 2]);
  const json finish = json::parse(payloads[payloads.size() - 3]);
  if (!usage.contains("nanoserve")) return t.fail("stream: no engine stats");
  check_finish(t, usage["usage"], finish["choices"][0].value("finish_reason", ""), max_tokens, "stream");
}

void stress(const std::string& engine, const std::string& args) {
  ServerProcess server(args);
  const std::chrono::seconds duration = stress_duration();
  const auto deadline = Clock::now() + duration;
  Tally t;
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      std::mt19937_64 rng(1000 + i);
      httplib::Client c = server.client();
      c.set_read_timeout(120, 0);
      while (Clock::now() < deadline) {
        try {
          one_request(c, rng, t);
        } catch (const std::exception& e) {
          t.fail(std::string("client: ") + e.what());
        }
      }
    });
  for (std::thread& c : clients) c.join();

  // Aborted streams are noticed within a connection check and a step.
  auto c = server.client();
  std::string text;
  eventually([&] {
    text = get(c, "/metrics").text;
    return metric_sample(text, "nanoserve_requests_running") == 0 && metric_sample(text, "nanoserve_requests_waiting") == 0 &&
           metric_sample(text, "nanoserve_kv_cache_used_blocks") == 0;
  });
  std::cout << "stress[" << engine << "] " << duration.count() << " s, " << kClients << " clients: " << t.completed
            << " completed, " << t.aborted << " aborted, " << t.refused << " refused (too long), " << t.failures.size()
            << " failures, " << t.tokens << " tokens; server: "
            << metric_sample(text, "nanoserve_request_cancellations_total") << " cancellations, "
            << metric_sample(text, "nanoserve_preemptions_total") << " preemptions, "
            << metric_sample(text, "nanoserve_batch_size_sequences_count") << " steps, "
            << metric_sample(text, "nanoserve_batch_size_sequences_sum") << " sequence-steps, KV blocks in use at the end "
            << metric_sample(text, "nanoserve_kv_cache_used_blocks") << " of " << metric_sample(text, "nanoserve_kv_cache_blocks")
            << "\n";
  for (const std::string& f : t.failures) ADD_FAILURE() << f;
  EXPECT_GT(t.completed, 0);
  EXPECT_GT(t.aborted, 0);
  EXPECT_EQ(metric_sample(text, "nanoserve_requests_running"), 0) << text;
  EXPECT_EQ(metric_sample(text, "nanoserve_requests_waiting"), 0) << text;
  EXPECT_EQ(metric_sample(text, "nanoserve_kv_cache_used_blocks"), 0) << text;
  EXPECT_EQ(metric_sample(text, "nanoserve_kv_cache_used_bytes"), 0) << text;
  EXPECT_LE(metric_sample(text, "nanoserve_request_cancellations_total"), static_cast<double>(t.aborted));
  EXPECT_GE(metric_sample(text, "nanoserve_generation_tokens_total"), static_cast<double>(t.tokens));
  EXPECT_EQ(get(c, "/health").status, 200);
  EXPECT_EQ(server.stop(), 0) << server.log().substr(0, 20000);
}

TEST(Stress, MockEngine) {
  stress("mock", "--engine mock --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf") +
                     " --parallel 8 --max-queue 128 --mock-token-delay-us 300");
}

// A 2-layer qwen3 with a byte vocabulary; a 1 MiB pool holds 2048 positions (512 bytes each),
// less than eight sequences of up to 900 positions: the newest are preempted now and then.
TEST(Stress, BatchEngineOnASmallSynthModel) {
  const std::string model = test::temp_file("stress-synth.gguf");
  const CommandResult synth = run_nanoserve(
      "synth --arch qwen3 --dims layers=2,embd=128,ff=256,heads=2,kv_heads=1,head_dim=64,vocab=259,ctx=4096 "
      "--out " + model);
  ASSERT_EQ(synth.status, 0) << synth.err;
  stress("batch", "--engine batch -t 1 --model " + model + " --ctx " + std::to_string(kContext) +
                      " --parallel 8 --kv-memory 1M --step-tokens 128 --max-queue 128");
  std::filesystem::remove(model);
}

}  // namespace
}  // namespace nanoserve::test
