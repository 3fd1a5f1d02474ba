// http::Server in this process, spoken to over raw sockets: pipelining, deadlines, caps, slow
// senders and slow readers, early answers, 100-continue, stop.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/raw_connection.h"

namespace nanoserve::http {
namespace {

using namespace std::chrono_literals;
using test::body_of;
using test::RawConnection;
using test::status_of;

Response text(int status, std::string body) {
  return Response{.status = status, .content_type = "text/plain", .headers = {}, .body = std::move(body)};
}

// What the /stream route saw.
struct StreamEnd {
  std::mutex mutex;
  std::condition_variable changed;
  bool ended = false;
  bool client_gone = false;
  size_t bytes = 0;

  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return ended; });
  }
};

class HttpServerTest : public testing::Test {
 protected:
  void start(ConnectionLimits limits = {}, size_t workers = 2) {
    std::vector<Route> routes = {
        {.method = "GET", .path = "/health",
         .handler = [](const Request&, ResponseWriter& w) { w.send(text(200, "ok")); }, .on_event_loop = true},
        {.method = "POST", .path = "/echo",
         .handler = [](const Request& r, ResponseWriter& w) { w.send(text(200, r.target + " " + r.body)); },
         .on_event_loop = false},
        {.method = "GET", .path = "/late",
         .handler =
             [](const Request&, ResponseWriter& w) {
               w.send(text(200, "late"));
               std::this_thread::sleep_for(300ms);  // the answer is out long before its handler returns
             },
         .on_event_loop = false},
        {.method = "GET", .path = "/stream",
         .handler =
             [this](const Request&, ResponseWriter& w) {
               const std::string piece(1024, 'x');
               size_t bytes = 0;
               bool ok = w.start_stream(text(200, ""));
               while (ok && bytes < stream_limit_) {
                 ok = w.write(piece);
                 if (ok) bytes += piece.size();
                 std::this_thread::sleep_for(std::chrono::microseconds(stream_pause_us_));
               }
               if (ok) w.end_stream();
               std::lock_guard lock(stream_.mutex);
               stream_.ended = true;
               stream_.client_gone = !ok;
               stream_.bytes = bytes;
               stream_.changed.notify_all();
             },
         .on_event_loop = false},
    };
    ServerHooks hooks{
        .check_head = [](const Request& head) -> std::optional<Response> {
          if (head.path == "/secret") return text(401, "no");
          return std::nullopt;
        },
        .error_response = [](const std::string&, int status, const std::string& message) {
          return text(status, message);
        },
        .answered = [this](const Request&, int) { ++answered_; },
    };
    limits.parse.max_body_bytes = 1000;
    server_ = std::make_unique<Server>(ServerConfig{.host = "127.0.0.1", .port = 0, .workers = workers, .limits = limits},
                                       std::move(routes), std::move(hooks));
    port_ = server_->start();
  }

  // Sends `request` on a new connection: its answer must have `status`, then the server closes.
  void expect_answer_then_close(const std::string& request, int status) {
    RawConnection c(port_);
    ASSERT_TRUE(c.send(request));
    EXPECT_EQ(status_of(c.read_response(5s)), status);
    EXPECT_TRUE(c.closed_by_server(3s));
  }

  std::string ask(const std::string& request) {
    RawConnection c(port_);
    c.send(request);
    return c.read_response(30s);
  }

  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::atomic<int> answered_{0};
  StreamEnd stream_;
  int stream_pause_us_ = 0;
  size_t stream_limit_ = 256u << 20;
};

const std::string kHealth = "GET /health HTTP/1.1\r\nHost: t\r\n\r\n";

std::string echo(const std::string& body, const std::string& query = "") {
  return "POST /echo" + query + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send(echo("one", "?1") + kHealth + echo("two", "?2")));
  EXPECT_EQ(body_of(c.read_response(5s)), "/echo?1 one");
  EXPECT_EQ(body_of(c.read_response(5s)), "ok");
  EXPECT_EQ(body_of(c.read_response(5s)), "/echo?2 two");
  // The connection stays open for more.
  ASSERT_TRUE(c.send(kHealth));
  EXPECT_EQ(status_of(c.read_response(5s)), 200);
}

TEST_F(HttpServerTest, ARequestSentAsTheAnswerGoesOutIsServedWhenItsHandlerReturns) {
  ConnectionLimits limits;
  limits.sweep_interval = 20s;  // nothing may wait for a sweep
  start(limits);
  RawConnection c(port_);
  ASSERT_TRUE(c.send("GET /late HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(body_of(c.read_response(5s)), "late");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.send(echo("next")));  // while /late's handler still runs
  EXPECT_EQ(body_of(c.read_response(10s)), "/echo next");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);  // not held until the next sweep, 20 s away
}

TEST_F(HttpServerTest, SlowClientsHoldNoThread) {
  start({}, 2);
  // 256 connections, each with a few bytes of a head: with a thread per connection they
  // would hold every worker.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 256; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(slow.back()->send("POST /echo HTTP/1.1\r\nHo"));
  }
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(status_of(ask(kHealth)), 200);  // answered at all: ask() gives up after its generous wait
    EXPECT_EQ(body_of(ask(echo("hi"))), "/echo hi");
    for (auto& s : slow) ASSERT_TRUE(s->send("s"));  // one more byte each: still incomplete
  }
}

TEST_F(HttpServerTest, AWholeRequestHasADeadlineNotOnePerByte) {
  ConnectionLimits limits;
  limits.request_timeout = 400ms;
  start(limits);
  RawConnection c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\n"));
  // A byte every 50 ms would keep a per-read timeout from ever firing: the 408 comes while the
  // bytes still trickle in (3 s of them), long after the 400 ms deadline.
  std::string response;
  for (int i = 0; i < 60 && response.empty(); ++i) {
    c.send("X");
    response = c.read_response(50ms);
  }
  EXPECT_EQ(status_of(response), 408) << response;
  EXPECT_TRUE(c.closed_by_server(2s));
}

TEST_F(HttpServerTest, AnIdleKeepAliveConnectionIsClosed) {
  ConnectionLimits limits;
  limits.idle_timeout = 200ms;
  start(limits);
  RawConnection c(port_);
  ASSERT_TRUE(c.send(kHealth));
  EXPECT_EQ(status_of(c.read_response(5s)), 200);
  EXPECT_TRUE(c.closed_by_server(3s));
}

TEST_F(HttpServerTest, AChunkedBodyCountsAgainstTheLimitAsItArrives) {
  start();
  RawConnection c(port_);
  const std::string chunk = "258\r\n" + std::string(600, 'x') + "\r\n";
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk));
  c.send(chunk);
  EXPECT_EQ(status_of(c.read_response(5s)), 413);
  EXPECT_TRUE(c.closed_by_server(3s));
  // Under the limit it is decoded and served.
  EXPECT_EQ(body_of(ask("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")),
            "/echo abc");
}

TEST_F(HttpServerTest, AReaderThatStopsReadingIsDroppedNotWaitedFor) {
  ConnectionLimits limits;
  limits.max_pending_response_bytes = 64u << 10;
  start(limits);
  RawConnection c(port_, 4096);
  ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  // The client reads nothing: the handler's writes must start failing, not block.
  ASSERT_TRUE(stream_.wait(10s));
  EXPECT_TRUE(stream_.client_gone);
  EXPECT_LT(stream_.bytes, 64u << 20);
}

TEST_F(HttpServerTest, AClientThatLeavesIsSeenByTheHandler) {
  stream_pause_us_ = 2000;
  start();
  {
    RawConnection c(port_);
    ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(stream_.wait(5s));
  EXPECT_TRUE(stream_.client_gone);
}

TEST_F(HttpServerTest, PastTheCapsOnlyHealthIsServed) {
  ConnectionLimits limits;
  limits.max_connections_per_client = 4;
  start(limits);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_));
    held.back()->send(kHealth);
    ASSERT_EQ(status_of(held.back()->read_response(5s)), 200);
  }
  EXPECT_EQ(status_of(ask(kHealth)), 200);
  RawConnection refused(port_);
  refused.send(echo("x"));
  EXPECT_EQ(status_of(refused.read_response(5s)), 503);
  EXPECT_TRUE(refused.closed_by_server(3s));
  refused.close();
  held.pop_back();  // one leaves: room again
  for (int i = 0; i < 100; ++i) {
    if (status_of(ask(echo("y"))) == 200) return;
    std::this_thread::sleep_for(10ms);
  }
  ADD_FAILURE() << "a connection closed did not make room";
}

TEST_F(HttpServerTest, AHeadCheckAnswersBeforeTheBodyIsRead) {
  start();
  expect_answer_then_close("POST /secret HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n", 401);
}

TEST_F(HttpServerTest, ExpectContinueGetsAnInterimAnswer) {
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(status_of(c.read_response(5s)), 100);
  ASSERT_TRUE(c.send("hi"));
  EXPECT_EQ(body_of(c.read_response(5s)), "/echo hi");
}

TEST_F(HttpServerTest, UnknownRoutesAndMethodsKeepTheConnection) {
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\nGET /echo HTTP/1.1\r\nHost: t\r\n\r\n" + kHealth));
  EXPECT_EQ(status_of(c.read_response(5s)), 404);
  EXPECT_EQ(status_of(c.read_response(5s)), 405);
  EXPECT_EQ(status_of(c.read_response(5s)), 200);
}

// A HEAD request gets the GET route's head (its Content-Length too) and no body: the answers
// pipelined after it still parse.
TEST_F(HttpServerTest, HeadIsAnsweredByTheGetRouteWithoutItsBody) {
  stream_limit_ = 4096;
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send("HEAD /late HTTP/1.1\r\nHost: t\r\n\r\nHEAD /stream HTTP/1.1\r\nHost: t\r\n\r\n" + kHealth));
  const std::string late = c.read_head(5s);
  EXPECT_EQ(status_of(late), 200);
  EXPECT_NE(late.find("Content-Length: 4\r\n"), std::string::npos) << late;
  const std::string stream = c.read_head(5s);
  EXPECT_EQ(status_of(stream), 200);
  EXPECT_NE(stream.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << stream;
  EXPECT_EQ(body_of(c.read_response(5s)), "ok");
  // Refusals too: a POST route's 405, an unknown path's 404.
  ASSERT_TRUE(c.send("HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\nHEAD /nothing HTTP/1.1\r\nHost: t\r\n\r\n" + kHealth));
  EXPECT_EQ(status_of(c.read_head(5s)), 405);
  EXPECT_EQ(status_of(c.read_head(5s)), 404);
  EXPECT_EQ(body_of(c.read_response(5s)), "ok");
}

TEST_F(HttpServerTest, ConnectionCloseIsHonouredOnceTheAnswerIsOut) {
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi"));
  const std::string response = c.read_response(5s);
  EXPECT_EQ(body_of(response), "/echo hi");
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  EXPECT_TRUE(c.closed_by_server(1s));  // at once, not at the next sweep or the idle timeout
}

TEST_F(HttpServerTest, MalformedFramingIsAnsweredThenClosed) {
  start();
  expect_answer_then_close("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400);
}

TEST_F(HttpServerTest, StopLetsAnAnswerInFlightFinish) {
  stream_pause_us_ = 100;
  stream_limit_ = 1u << 20;
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::thread reader([&] { c.read_response(60s); });
  std::this_thread::sleep_for(50ms);
  server_->stop();  // returns only after the stream's handler has returned
  EXPECT_TRUE(stream_.ended);
  reader.join();
}

}  // namespace
}  // namespace nanoserve::http
