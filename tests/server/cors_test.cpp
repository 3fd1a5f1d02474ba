// --cors-origin: browser apps on the allowed origin may call every API. A preflight is
// answered 204 without the API key (browsers send none with it); answers, the API's errors and
// the HTTP layer's carry Access-Control-Allow-Origin. Without the flag nothing changes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "http/raw_connection.h"
#include "server/server_process.h"
#include "support/test_paths.h"

namespace nanoserve::test {
namespace {

using namespace std::chrono_literals;

std::string exchange(int port, const std::string& request) {
  RawConnection c(port);
  c.send(request);
  return c.read_response(10s);
}

std::string preflight(const std::string& path) {
  return "OPTIONS " + path + " HTTP/1.1\r\nHost: t\r\nOrigin: http://app.test\r\n"
         "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-api-key, content-type\r\n\r\n";
}

std::string post(const std::string& path, const std::string& body, const std::string& key) {
  return "POST " + path + " HTTP/1.1\r\nHost: t\r\nOrigin: http://app.test\r\nContent-Type: application/json\r\n" +
         (key.empty() ? "" : "x-api-key: " + key + "\r\n") + "Content-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

const std::string kMessage = R"({"max_tokens":2,"messages":[{"role":"user","content":"hi"}]})";

TEST(Cors, TheAllowedOriginMayCallEveryApi) {
  ServerProcess server(mock_server_args("--api-key k --cors-origin http://app.test"));
  for (const std::string path : {"/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/chat"}) {
    const std::string answer = exchange(server.port(), preflight(path));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 204 ")) << answer;
    EXPECT_NE(answer.find("Access-Control-Allow-Origin: http://app.test\r\n"), std::string::npos) << answer;
    EXPECT_NE(answer.find("Access-Control-Allow-Headers: x-api-key, content-type\r\n"), std::string::npos) << answer;
    EXPECT_NE(answer.find("Access-Control-Allow-Methods: "), std::string::npos) << answer;
    EXPECT_EQ(answer.find("Content-Length"), std::string::npos) << answer;
  }
  const std::string ok = exchange(server.port(), post("/v1/messages", kMessage, "k"));
  EXPECT_TRUE(ok.starts_with("HTTP/1.1 200 ")) << ok;
  EXPECT_NE(ok.find("Access-Control-Allow-Origin: http://app.test\r\n"), std::string::npos) << ok;
  // Refusals too, or the browser app could not read why.
  for (const std::string& refused : {post("/v1/messages", kMessage, ""), post("/v1/messages", "{}", "k"),
                                     post("/v1/nothing", "{}", "k")}) {
    const std::string answer = exchange(server.port(), refused);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 4")) << answer;
    EXPECT_NE(answer.find("Access-Control-Allow-Origin: http://app.test\r\n"), std::string::npos) << answer;
  }
  EXPECT_EQ(server.stop(), 0) << server.log();
}

TEST(Cors, OffByDefault) {
  ServerProcess server(mock_server_args("--api-key k"));
  const std::string answer = exchange(server.port(), preflight("/v1/messages"));
  EXPECT_FALSE(answer.starts_with("HTTP/1.1 204 ")) << answer;
  const std::string ok = exchange(server.port(), post("/v1/messages", kMessage, "k"));
  EXPECT_TRUE(ok.starts_with("HTTP/1.1 200 ")) << ok;
  EXPECT_EQ(ok.find("Access-Control-Allow-Origin"), std::string::npos) << ok;
}

}  // namespace
}  // namespace nanoserve::test
