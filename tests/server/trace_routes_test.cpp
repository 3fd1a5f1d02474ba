// The data of the lab's pages over HTTP: GET /v1/timelines (recent requests' timelines, or one
// request's by id) and GET /v1/engine/events (the batch engine's snapshots as server-sent
// events), behind the API key like the rest of the API, with 4xx answers in OpenAI's shape for
// a bad query; the pages under /lab/ load without the key. A server that stops while a page
// watches its events still stops.
#include <gtest/gtest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "server/query_string.h"
#include "server/api_error.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

const httplib::Headers kKey = {{"Authorization", "Bearer k"}};

class TraceRoutes : public testing::Test {
 protected:
  void SetUp() override {
    if (!server_)
      server_ = std::make_unique<ServerProcess>("--model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf") +
                                                " --threads 1 --api-key k");
  }
  static void TearDownTestSuite() {
    if (!server_) return;
    EXPECT_EQ(server_->stop(), 0) << server_->log();
    server_.reset();
  }
  static std::unique_ptr<ServerProcess> server_;
};
std::unique_ptr<ServerProcess> TraceRoutes::server_;

std::string complete(httplib::Client& c, const std::string& prompt, bool stream) {
  const nlohmann::json body = {{"prompt", prompt}, {"max_tokens", 8}, {"ignore_eos", true}, {"stream", stream}};
  const auto r = c.Post("/v1/completions", kKey, body.dump(), "application/json");
  EXPECT_TRUE(r && r->status == 200);
  if (!r) return "";
  static const std::regex kId(R"re("id":"([^"]+)")re");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r->body, m, kId)) << r->body;
  return m[1];
}

TEST_F(TraceRoutes, RecentTimelinesAndOneById) {
  auto c = server_->client();
  const std::string streamed = complete(c, "hello", true);
  const std::string whole = complete(c, "hello there", false);
  const auto recent = c.Get("/v1/timelines?last=2", kKey);
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->status, 200) << recent->body;
  const auto list = nlohmann::json::parse(recent->body);
  ASSERT_EQ(list["data"].size(), 2u);
  EXPECT_EQ(list["data"][0]["id"], whole);  // newest first
  EXPECT_EQ(list["data"][1]["id"], streamed);
  for (const auto& t : list["data"]) {
    EXPECT_TRUE(t["finished"].get<bool>());
    const auto& events = t["events"];
    EXPECT_EQ(events.front()["kind"], "queued");
    // The engine's end, after its last step; the server may still be writing the last text then.
    // A plain step makes one token, a verify step (prompt lookup's drafts, taken when the
    // measured step times say they pay) its accepted drafts and one more.
    int generated = 0, writes = 0, finished = 0;
    for (const auto& e : events) {
      writes += e["kind"] == "write";
      finished += e["kind"] == "finished";
      if (e["kind"] == "decode" || e["kind"] == "verify") {
        generated += e["kind"] == "decode" ? 1 : e["accepted"].get<int>() + 1;
        EXPECT_GE(e["batch_sequences"].get<int>(), 1);
        EXPECT_EQ(finished, 0) << "a step after the end";
      }
    }
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(generated, 7) << events.dump();  // 8 tokens: the first from the prompt's chunk
    EXPECT_GE(writes, 1);
  }
  const auto one = c.Get("/v1/timelines?id=" + streamed, kKey);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200);
  EXPECT_EQ(nlohmann::json::parse(one->body)["data"][0]["id"], streamed);
}

TEST_F(TraceRoutes, ABadQueryIsA4xxInOpenAisShape) {
  auto c = server_->client();
  const auto expect_error = [&](const std::string& target, int status, const std::string& param) {
    const auto r = c.Get(target, kKey);
    ASSERT_TRUE(r) << target;
    EXPECT_EQ(r->status, status) << target << ": " << r->body;
    const auto error = nlohmann::json::parse(r->body)["error"];
    EXPECT_FALSE(error["message"].get<std::string>().empty()) << target;
    if (!param.empty()) {
      EXPECT_EQ(error["param"], param) << target;
    }
  };
  expect_error("/v1/timelines?last=0", 400, "last");
  expect_error("/v1/timelines?last=65", 400, "last");
  expect_error("/v1/timelines?last=x", 400, "last");
  expect_error("/v1/timelines?id=nobody", 404, "id");
  expect_error("/v1/timelines?id=a&last=2", 400, "last");
  expect_error("/v1/timelines?colour=red", 400, "colour");
  expect_error("/v1/timelines?id=%zz", 400, "");
  EXPECT_EQ(c.Get("/v1/timelines")->status, 401);
  EXPECT_EQ(c.Get("/v1/engine/events")->status, 401);
}

TEST_F(TraceRoutes, TheEventStreamSendsSnapshotsOfTheEngine) {
  auto c = server_->client();
  std::string received;
  std::thread load([&] {
    auto other = server_->client();
    complete(other, "a prompt to watch", true);
  });
  const auto r = c.Get("/v1/engine/events", kKey, [&](const char* data, size_t n) {
    received.append(data, n);
    return received.find("\"steps\"") == std::string::npos || received.find("\n\n") == std::string::npos;
  });
  load.join();
  ASSERT_NE(received.find("event: snapshot\ndata: {"), std::string::npos) << received;
  const size_t start = received.find("data: ") + 6;
  const auto snapshot = nlohmann::json::parse(received.substr(start, received.find("\n\n") - start));
  EXPECT_GT(snapshot["total_blocks"].get<int64_t>(), 0);
  EXPECT_TRUE(snapshot.contains("sequences"));
  EXPECT_TRUE(snapshot.contains("recent_steps"));
}

TEST_F(TraceRoutes, TheLabPagesLoadWithoutTheKey) {
  auto c = server_->client();
  for (const std::string path : {"/lab/", "/lab", "/lab/timeline.html", "/lab/engine.html", "/lab/engine.mjs",
                                  "/lab/timeline.mjs", "/lab/draw.mjs", "/lab/lab.css"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
  }
}

// The mock engine records no steps: the routes say so (404), not an empty list.
TEST(TraceRoutesWithoutATrace, AreRefusedWithTheReason) {
  ServerProcess server("--engine mock --model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf"));
  auto c = server.client();
  const auto r = c.Get("/v1/timelines");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("batch engine"), std::string::npos) << r->body;
  EXPECT_EQ(c.Get("/v1/engine/events")->status, 404);
  EXPECT_EQ(server.stop(), 0);
}

// A page left open on the event stream does not keep the server from stopping.
TEST(TraceRoutesShutdown, AWatchedServerStillStops) {
  ServerProcess server("--model " + shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " --threads 1");
  std::thread watcher([&] {
    auto c = server.client();
    c.set_read_timeout(30, 0);
    c.Get("/v1/engine/events", [](const char*, size_t) { return true; });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server.stop(), 0);
  // Not held until the watcher's read timeout (30 s) gives up.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  watcher.join();
}

TEST(QueryParameters, DecodesNamesAndValues) {
  using server::query_parameters;
  EXPECT_TRUE(query_parameters("/v1/timelines").empty());
  const auto p = query_parameters("/v1/timelines?id=cmpl%2D1&last=8&q=a+b&flag");
  EXPECT_EQ(p.at("id"), "cmpl-1");
  EXPECT_EQ(p.at("last"), "8");
  EXPECT_EQ(p.at("q"), "a b");
  EXPECT_EQ(p.at("flag"), "");
  EXPECT_THROW(query_parameters("/x?a=%4"), server::ApiError);
  EXPECT_THROW(query_parameters("/x?a=%g0"), server::ApiError);
  EXPECT_THROW(query_parameters("/x?a=1&a=2"), server::ApiError);
}

}  // namespace
}  // namespace nanoserve::test
