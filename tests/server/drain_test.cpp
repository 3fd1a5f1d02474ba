// Stopping a served process as a balancer's rolling restart needs (server_drain.h): on SIGTERM
// the streams in flight finish, /health answers 503 "draining", a new request gets 503 in the
// API's error format at once, and the process exits 0; past --drain-timeout the streams still
// running end with an error event; a second SIGTERM ends the process at once.
#include <gtest/gtest.h>

#include <csignal>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/api_client.h"
#include "server/server_process.h"

namespace nanoserve::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json stream_of(int max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", "Go on."}}}}, {"max_tokens", max_tokens}, {"stream", true}};
}

// Streams that run on threads of their own; each keeps its whole body.
struct Streams {
  std::vector<std::thread> threads;
  std::vector<std::string> bodies;
  std::vector<int> statuses;

  Streams(const ServerProcess& server, int n, int max_tokens) : bodies(n), statuses(n) {
    for (int i = 0; i < n; ++i)
      threads.emplace_back([this, &server, i, max_tokens] {
        auto c = server.client();
        c.set_read_timeout(120s);
        statuses[i] = post_streaming(c, "/v1/chat/completions", stream_of(max_tokens), [this, i](const std::string& d) {
          bodies[i] += d;
          return true;
        });
      });
  }
  void join() {
    for (std::thread& t : threads) t.join();
  }
};

// Polls /metrics until `n` requests run (every stream has started).
void wait_until_running(const ServerProcess& server, double n) {
  for (const auto give_up = std::chrono::steady_clock::now() + 60s;;) {
    auto c = server.client();
    const auto res = c.Get("/metrics");
    if (res && metric_sample(res->body, "nanoserve_requests_running") == n) return;
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the streams did not start";
    std::this_thread::sleep_for(5ms);
  }
}

TEST(Drain, StreamsInFlightFinishWhileHealthSaysDrainingAndNewRequestsGet503) {
  // 8 streams of 300 tokens, 2 ms each: 0.6 s, well within the drain.
  ServerProcess server(mock_server_args("--parallel 8 --mock-token-delay-us 2000 --drain-timeout 120"));
  Streams streams(server, 8, 300);
  ASSERT_NO_FATAL_FAILURE(wait_until_running(server, 8));
  server.signal(SIGTERM);
  server.wait_for_log("draining", 30s);
  auto c = server.client();
  const JsonResponse health = get(c, "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.body["status"], "draining");
  const JsonResponse refused = post_json(c, "/v1/chat/completions", stream_of(4));
  EXPECT_EQ(refused.status, 503);
  EXPECT_NE(refused.body["error"]["message"].get<std::string>().find("shutting down"), std::string::npos);
  streams.join();
  for (size_t i = 0; i < streams.bodies.size(); ++i) {
    EXPECT_EQ(streams.statuses[i], 200) << i;
    const std::vector<std::string> payloads = sse_payloads(streams.bodies[i]);
    ASSERT_FALSE(payloads.empty());
    EXPECT_EQ(payloads.back(), "[DONE]") << i;
    EXPECT_EQ(streams.bodies[i].find("\"error\""), std::string::npos) << i;  // finished, not cut
  }
  EXPECT_EQ(server.wait_for_exit(60s), 0);
}

TEST(Drain, PastTheDrainTimeoutTheStreamsEndWithAnErrorEvent) {
  // 2 streams of 500 tokens, 20 ms each: 10 s, far past the drain's 0.3 s.
  ServerProcess server(mock_server_args("--mock-token-delay-us 20000 --drain-timeout 0.3"));
  Streams streams(server, 2, 500);
  ASSERT_NO_FATAL_FAILURE(wait_until_running(server, 2));
  const auto signalled = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  streams.join();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, 8s);  // cut, not run to their end
  for (size_t i = 0; i < streams.bodies.size(); ++i) {
    const std::vector<std::string> payloads = sse_payloads(streams.bodies[i]);
    ASSERT_GE(payloads.size(), 2u);
    EXPECT_EQ(payloads.back(), "[DONE]") << i;
    const json error = json::parse(payloads[payloads.size() - 2]);
    EXPECT_NE(error["error"]["message"].get<std::string>().find("shutting down"), std::string::npos) << i;
  }
  EXPECT_EQ(server.wait_for_exit(60s), 0);
}

TEST(Drain, ASecondSignalStopsAtOnce) {
  ServerProcess server(mock_server_args("--mock-token-delay-us 20000 --drain-timeout 120"));
  Streams streams(server, 1, 500);
  ASSERT_NO_FATAL_FAILURE(wait_until_running(server, 1));
  server.signal(SIGTERM);
  server.wait_for_log("draining", 30s);
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_for_exit(8s), 128 + SIGTERM);
  streams.join();
}

}  // namespace
}  // namespace nanoserve::test
