// The HTTP server: it starts listening before the model is loaded (so /health can say
// "loading" meanwhile) and serves on threads of its own (http::Server) until stop().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "http/server.h"
#include "server/api_family.h"
#include "server/limits.h"
#include "server/served_model.h"

namespace nanoserve::server {

class ServerState;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;          // 0: any free port (bind() says which)
  std::string api_key;      // empty: none; else every route but /health and the chat page's needs
                            // `Authorization: Bearer <key>` (or `x-api-key: <key>`)
  std::string cors_origin;  // empty: no cross-origin requests; else the origin allowed ("*": any)
  ServerLimits limits;
  size_t http_threads = 8;  // requests answered at once (a stream holds one for its whole length)
  http::ConnectionLimits connections;  // deadlines and caps; its body limit is limits.max_body_bytes
};

class HttpServer {
 public:
  // OpenAI's API and the operational routes, and the routes of `families` (other APIs).
  explicit HttpServer(ServerOptions options, std::vector<ApiFamily> families = {});
  ~HttpServer();  // stop()

  // Binds and starts serving; returns the port once connections are accepted. Throws
  // std::runtime_error when it cannot bind.
  int start();
  // Stops accepting, lets the requests in flight finish, then returns.
  void stop();
  // Drains (server_drain.h): /health 503, new requests 503, the requests in flight go on.
  void drain();
  int64_t in_flight() const;
  // Ends the generations still streaming with an error event (the drain's time is up).
  void cut_generations();
  // The model is loaded: health turns 200 and the API answers.
  void serve_model(std::shared_ptr<const ServedModel> model);

 private:
  ServerOptions options_;
  std::vector<ApiFamily> families_;
  std::unique_ptr<ServerState> state_;
  std::unique_ptr<http::Server> http_;
};

}  // namespace nanoserve::server
