// The chat page (web/, built into the binary), as a browser gets it from `nanoserve serve`:
// GET / and every file the page names, each with its Content-Type, the Content-Security-Policy
// that allows no inline script, nosniff and a validator; without the API key that the API
// still asks for.
#include <gtest/gtest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

class StaticRoutes : public testing::Test {
 protected:
  // One server for the suite, started in the first test (see mock_api_test.cpp).
  void SetUp() override {
    if (!server_)
      server_ = std::make_unique<ServerProcess>("--engine mock --model " +
                                                shared_path("golden/models/tiny-qwen3-Q8_0.gguf") + " --api-key k");
  }
  static void TearDownTestSuite() {
    if (!server_) return;
    EXPECT_EQ(server_->stop(), 0) << server_->log();
    server_.reset();
  }
  httplib::Client client() { return server_->client(); }
  static std::unique_ptr<ServerProcess> server_;
};
std::unique_ptr<ServerProcess> StaticRoutes::server_;

// The paths of the files `html` loads: its src= and href= attributes that name this server's.
std::vector<std::string> linked_paths(const std::string& html) {
  static const std::regex kLink(R"re((?:src|href)="(/[^"]*)")re");
  std::vector<std::string> paths;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kLink); it != std::sregex_iterator(); ++it)
    paths.push_back((*it)[1]);
  return paths;
}

void expect_page_headers(const httplib::Result& r) {
  ASSERT_TRUE(r);
  const std::string csp = r->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << csp;
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache");
  EXPECT_FALSE(r->get_header_value("ETag").empty());
}

TEST_F(StaticRoutes, ThePageLoadsWithoutTheKey) {
  auto c = client();
  const auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  expect_page_headers(page);
  EXPECT_EQ(page->body.find("<script>"), std::string::npos) << "an inline script, which the policy would block";
  // Its style sheet, its scripts (modules) and its icon, each with its type.
  const std::vector<std::string> paths = linked_paths(page->body);
  ASSERT_GE(paths.size(), 3u) << page->body;
  std::vector<std::string> types;
  for (const std::string& path : paths) {
    const auto asset = c.Get(path);
    ASSERT_TRUE(asset) << path;
    EXPECT_EQ(asset->status, 200) << path;
    EXPECT_FALSE(asset->body.empty()) << path;
    expect_page_headers(asset);
    types.push_back(asset->get_header_value("Content-Type"));
  }
  EXPECT_NE(std::find(types.begin(), types.end(), "text/css; charset=utf-8"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "text/javascript; charset=utf-8"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "image/svg+xml"), types.end());
}

TEST_F(StaticRoutes, TheApiStillNeedsTheKey) {
  auto c = client();
  EXPECT_EQ(c.Get("/v1/models")->status, 401);
  EXPECT_EQ(c.Get("/metrics")->status, 401);
  EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer k"}})->status, 200);
  // A path that is no file of the page is no way around the key, nor found with it.
  EXPECT_EQ(c.Get("/chat.mjs/../v1/models")->status, 401);
  const auto unknown = c.Get("/nothing.js", {{"Authorization", "Bearer k"}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->get_header_value("Content-Type"), "application/json");
  const nlohmann::json error = nlohmann::json::parse(unknown->body);
  EXPECT_EQ(error["error"]["code"], "unknown_url") << unknown->body;
  EXPECT_NE(error["error"]["message"].get<std::string>().find("/nothing.js"), std::string::npos) << unknown->body;
}

TEST_F(StaticRoutes, HeadAndGetOnly) {
  auto c = client();
  const auto get = c.Get("/");
  const auto head = c.Head("/");
  ASSERT_TRUE(get);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(get->body.size()));
  EXPECT_TRUE(head->body.empty());
  expect_page_headers(head);
  EXPECT_EQ(c.Post("/", "{}", "application/json")->status, 405);
  EXPECT_EQ(c.Delete("/chat.css")->status, 405);
}

// The browser keeps the page and asks whether it changed: 304, no body, until the binary changes.
TEST_F(StaticRoutes, AnUnchangedFileIsNotSentAgain) {
  auto c = client();
  const auto first = c.Get("/chat.css");
  ASSERT_TRUE(first);
  const std::string etag = first->get_header_value("ETag");
  const auto again = c.Get("/chat.css", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  EXPECT_FALSE(again->has_header("Content-Length"));
  EXPECT_EQ(again->get_header_value("ETag"), etag);
  EXPECT_EQ(c.Get("/chat.css", {{"If-None-Match", "\"other\""}})->status, 200);
  EXPECT_NE(c.Get("/")->get_header_value("ETag"), etag);  // each file its own
}

}  // namespace
}  // namespace nanoserve::test
