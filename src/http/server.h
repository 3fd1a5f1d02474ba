// An event-driven HTTP/1.1 server: one thread at a time waits on every socket (epoll) and
// parses requests as their bytes come; the thread that completes a request runs its handler,
// and another takes over the loop (leader_followers.h).
// A client that sends slowly, or not at all, holds a socket and a few bytes, never a
// thread: the whole request (head and body) has a deadline, and so has an idle keep-alive
// connection. Connections are capped per client address and in all; past the caps a
// connection is still answered on routes marked `on_event_loop` (a health check), and
// with 503 on every other.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/request.h"
#include "http/request_parser.h"
#include "http/response.h"
#include "http/response_writer.h"

namespace nanoserve::http {

using Handler = std::function<void(const Request&, ResponseWriter&)>;

struct Route {
  std::string method;
  std::string path;
  Handler handler;
  // Answered on the event loop itself instead of by a worker, so that it is answered while
  // every worker is busy and past the connection caps. Its handler must not block.
  bool on_event_loop = false;
  // Still answered while the server drains (a health check a balancer reads); every other
  // route then gets 503 at once.
  bool while_draining = false;
};

struct ConnectionLimits {
  ParseLimits parse;
  std::chrono::milliseconds request_timeout{30'000};  // a request's head and body, in all (408 after)
  std::chrono::milliseconds idle_timeout{60'000};     // a keep-alive connection between requests
  std::chrono::milliseconds send_timeout{30'000};     // an answer that the client does not read
  size_t max_connections = 4096;
  size_t max_connections_per_client = 512;  // per client address
  size_t max_pending_response_bytes = 4u << 20;  // written but unread: the client is dropped beyond
  std::chrono::milliseconds sweep_interval{100};  // how often the deadlines are checked
};

struct ServerHooks {
  // After a request's head, before its body is read: an answer here ends the request and
  // the connection (the body is never read). Runs on the event loop.
  std::function<std::optional<Response>(const Request& head)> check_head;
  // The answer to an error found by the HTTP layer itself: a malformed request, a limit, an
  // unknown route, a full server. `path` is the request's (empty when its head did not parse),
  // so that each API can answer in its own error format.
  std::function<Response(const std::string& path, int status, const std::string& message)> error_response;
  // After every answer, on the thread that made it.
  std::function<void(const Request&, int status)> answered;
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  size_t workers = 8;  // handlers running at once (one thread more waits on the sockets)
  ConnectionLimits limits;
};

class Server {
 public:
  Server(ServerConfig config, std::vector<Route> routes, ServerHooks hooks);
  ~Server();  // stop()

  // Binds, listens and starts serving; returns the port. Throws std::runtime_error when it
  // cannot bind.
  int start();
  // Draining: new requests (on new connections and kept-alive ones) are answered 503 at once
  // and their connections closed, but routes marked while_draining; answers in flight go on.
  void drain();
  // Requests whose handlers have not returned yet.
  int64_t in_flight() const;
  // Stops accepting and reading new requests, lets the answers in flight finish, then returns.
  void stop();

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace nanoserve::http
