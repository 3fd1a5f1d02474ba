#include "server/http_errors.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "engine/engine.h"
#include "server/response_json.h"

namespace nanoserve::server {

void send_error(httplib::Response& res, const ApiError& error) {
  res.status = error.status;
  res.set_content(json_text(error_body(error)), "application/json");
}

httplib::Server::Handler with_api_errors(httplib::Server::Handler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const engine::QueueFull& e) {
      send_error(res, ApiError(429, fmt::format("the server is busy: {}", e.what()), "rate_limit_error", "",
                               "queue_full"));
    } catch (const std::invalid_argument& e) {
      send_error(res, invalid_request(e.what()));
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, fmt::format("internal error: {}", e.what()), "server_error"));
    }
  };
}

httplib::Server::HandlerResponse fill_in_error_body(const httplib::Request& req, httplib::Response& res,
                                                     size_t max_body_bytes) {
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  switch (res.status) {
    case 404:
      send_error(res, ApiError(404, fmt::format("unknown route: {} {}", req.method, req.path), "invalid_request_error",
                               "", "unknown_url"));
      break;
    case 413:
      send_error(res, ApiError(413, fmt::format("the request body is larger than this server's limit of {} bytes",
                                                max_body_bytes), "invalid_request_error", "", "request_too_large"));
      break;
    default:
      send_error(res, ApiError(res.status, fmt::format("HTTP {}", res.status),
                               res.status >= 500 ? "server_error" : "invalid_request_error"));
  }
  return httplib::Server::HandlerResponse::Handled;
}

}  // namespace nanoserve::server
