// The HTTP server: it starts listening before the model is loaded (so /health can say
// "loading" meanwhile) and serves on a thread of its own until stop().
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "server/limits.h"
#include "server/served_model.h"

namespace httplib {
class Server;
}

namespace nanoserve::server {

class ServerState;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;          // 0: any free port (bind() says which)
  std::string api_key;      // empty: none; else every route but /health needs `Authorization: Bearer <key>`
  ServerLimits limits;
  size_t http_threads = 8;  // connections served at once (a stream holds one for its whole length)
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();  // stop()

  // Binds and starts serving; returns the port once connections are accepted. Throws
  // std::runtime_error when it cannot bind.
  int start();
  // Stops accepting, lets the requests in flight finish, then returns.
  void stop();
  // The model is loaded: health turns 200 and the API answers.
  void serve_model(std::shared_ptr<const ServedModel> model);

 private:
  ServerOptions options_;
  std::unique_ptr<ServerState> state_;
  std::unique_ptr<httplib::Server> http_;
  int listen_socket_ = -1;  // the listening socket, once bound
  std::thread listener_;
  std::atomic<bool> listener_returned_{false};
};

}  // namespace nanoserve::server
