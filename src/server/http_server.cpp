#include "server/http_server.h"

#include <sys/socket.h>

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <stdexcept>
#include <utility>

#include "server/api_key_auth.h"
#include "server/http_errors.h"
#include "server/request_log.h"
#include "server/routes.h"
#include "server/server_state.h"

namespace nanoserve::server {
namespace {

using httplib::Server;

// Every route but /health needs the key when one is set (health checks stay open).
Server::HandlerResponse check_api_key(const httplib::Request& req, httplib::Response& res, const std::string& key) {
  if (key.empty() || req.path == "/health" || bearer_token_matches(req.get_header_value("Authorization"), key))
    return Server::HandlerResponse::Unhandled;
  send_error(res, ApiError(401, "missing or incorrect API key: send the header 'Authorization: Bearer <key>'",
                           "invalid_request_error", "", "invalid_api_key"));
  return Server::HandlerResponse::Handled;
}

}  // namespace

HttpServer::HttpServer(ServerOptions options)
    : options_(std::move(options)),
      state_(std::make_unique<ServerState>(options_.limits, options_.api_key)),
      http_(std::make_unique<Server>()) {
  ServerState& state = *state_;
  const size_t threads = options_.http_threads;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.limits.max_body_bytes);
  http_->set_keep_alive_max_count(1000);
  http_->set_tcp_nodelay(true);  // each SSE event goes out as soon as it is written
  // Remember the listening socket: start() widens its accept queue.
  http_->set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_socket_ = sock;
  });
  http_->set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
    this_thread_request_log() = RequestLogRecord{};
    return check_api_key(req, res, state.api_key());
  });
  const size_t max_body_bytes = options_.limits.max_body_bytes;
  http_->set_error_handler(Server::HandlerWithResponse(
      [max_body_bytes](const httplib::Request& req, httplib::Response& res) {
        return fill_in_error_body(req, res, max_body_bytes);
      }));
  http_->set_logger([&state](const httplib::Request& req, const httplib::Response& res) {
    state.metrics().count_response(res.status);
    RequestLogRecord& record = this_thread_request_log();
    fmt::print(stderr, "{}\n", request_log_line(req.method, req.path, res.status, record, Clock::now()));
    record = RequestLogRecord{};
  });
  add_generation_routes(*http_, state);
  add_info_routes(*http_, state);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start() {
  const int port = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                      : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port <= 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}", options_.host, options_.port));
  // httplib listens with a backlog of 5: a burst of new connections (dozens of clients at
  // once) overflows it and the kernel drops some. Listening again only resizes the queue.
  if (listen_socket_ >= 0) ::listen(listen_socket_, SOMAXCONN);
  listener_ = std::thread([this] {
    http_->listen_after_bind();
    listener_returned_ = true;
  });
  // httplib's stop() only acts on a running server: return once it runs.
  while (!http_->is_running() && !listener_returned_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port;
}

void HttpServer::stop() {
  if (!listener_.joinable()) return;
  http_->stop();
  listener_.join();
}

void HttpServer::serve_model(std::shared_ptr<const ServedModel> model) { state_->set_model(std::move(model)); }

}  // namespace nanoserve::server
