#include "server/http_server.h"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

#include "server/api_key_auth.h"
#include "server/cors.h"
#include "server/http_errors.h"
#include "server/request_log.h"
#include "server/routes.h"
#include "server/server_state.h"

namespace nanoserve::server {
namespace {

// Every route but /health and the chat page's needs the key when one is set (health checks stay
// open; the page asks for the key itself). Checked on the request's head, before its body is read.
std::optional<http::Response> check_api_key(const http::Request& head, const std::string& key, ErrorBody body) {
  if (key.empty() || head.path == "/health" || is_static_page(head.path) ||
      bearer_token_matches(head.header("authorization"), key) ||
      api_key_matches(head.header("x-api-key"), key))
    return std::nullopt;
  return error_response(ApiError(401, "missing or incorrect API key: send the header 'Authorization: Bearer <key>' "
                                 "or 'x-api-key: <key>'", "invalid_request_error", "", "invalid_api_key"), body);
}

// Each route starts its thread's log record with the request's arrival; its answers carry
// `headers` (CORS).
std::vector<http::Route> logged(std::vector<http::Route> routes, const std::vector<http::Header>& headers) {
  for (http::Route& route : routes)
    route.handler = [handler = std::move(route.handler), headers](const http::Request& req,
                                                                   http::ResponseWriter& res) {
      this_thread_request_log() = RequestLogRecord{.received = req.received, .id = {}, .stats = {}, .cancelled = false};
      for (const http::Header& h : headers) res.add_header(h);
      handler(req, res);
    };
  return routes;
}

http::ServerConfig http_config(const ServerOptions& options) {
  http::ServerConfig config{.host = options.host, .port = options.port, .workers = options.http_threads,
                            .limits = options.connections};
  config.limits.parse.max_body_bytes = options.limits.max_body_bytes;
  return config;
}

}  // namespace

HttpServer::HttpServer(ServerOptions options, std::vector<ApiFamily> families)
    : options_(std::move(options)), families_(std::move(families)),
      state_(std::make_unique<ServerState>(options_.limits, options_.api_key)) {
  ServerState& state = *state_;
  std::vector<http::Route> routes = generation_routes(state);
  for (http::Route& r : info_routes(state)) routes.push_back(std::move(r));
  for (http::Route& r : static_routes()) routes.push_back(std::move(r));
  for (http::Route& r : trace_routes(state)) routes.push_back(std::move(r));
  for (const ApiFamily& family : families_)
    for (http::Route& r : family.routes(state)) {
      r.handler = with_api_errors(std::move(r.handler), family.error_body);
      routes.push_back(std::move(r));
    }
  const std::string& origin = options_.cors_origin;
  const std::vector<http::Header> answer_headers = origin.empty() ? std::vector<http::Header>{} : cors_headers(origin);
  http::ServerHooks hooks{
      .check_head =
          [this, &state, &origin, answer_headers](const http::Request& head) -> std::optional<http::Response> {
            if (!origin.empty() && is_preflight(head)) return preflight_response(origin, head);
            auto refused = check_api_key(head, state.api_key(), error_body_for(families_, head.path));
            if (refused) refused->headers.insert(refused->headers.end(), answer_headers.begin(), answer_headers.end());
            return refused;
          },
      .error_response =
          [this, answer_headers](const std::string& path, int status, const std::string& message) {
            http::Response r = error_response(http_layer_error(status, message), error_body_for(families_, path));
            r.headers.insert(r.headers.end(), answer_headers.begin(), answer_headers.end());
            return r;
          },
      .answered =
          [&state](const http::Request& req, int status) {
            state.metrics().count_response(status);
            RequestLogRecord& record = this_thread_request_log();
            if (record.id.empty() && !record.stats) record.received = req.received;  // answered by the HTTP layer
            fmt::print(stderr, "{}\n", request_log_line(req.method, req.path, status, record, Clock::now()));
            record = RequestLogRecord{};
          },
  };
  http_ = std::make_unique<http::Server>(http_config(options_), logged(std::move(routes), answer_headers),
                                         std::move(hooks));
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::start() { return http_->start(); }

void HttpServer::stop() {
  state_->begin_stopping();
  http_->stop();
}

void HttpServer::drain() {
  state_->begin_stopping();
  http_->drain();
}

int64_t HttpServer::in_flight() const { return http_->in_flight(); }

void HttpServer::cut_generations() { state_->cut_generations(); }

void HttpServer::serve_model(std::shared_ptr<const ServedModel> model) { state_->set_model(std::move(model)); }

}  // namespace nanoserve::server
