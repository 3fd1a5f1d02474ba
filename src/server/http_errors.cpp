#include "server/http_errors.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "engine/engine.h"
#include "server/response_json.h"

namespace nanoserve::server {

http::Response error_response(const ApiError& error, ErrorBody body) {
  return json_response(body(error), error.status);
}

http::Handler with_api_errors(http::Handler handler, ErrorBody body) {
  return [handler = std::move(handler), body](const http::Request& req, http::ResponseWriter& res) {
    auto answer = [&res, body](const ApiError& error) {
      if (!res.started()) res.send(error_response(error, body));
    };
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      answer(e);
    } catch (const engine::QueueFull& e) {
      answer(ApiError(429, fmt::format("the server is busy: {}", e.what()), "rate_limit_error", "", "queue_full"));
    } catch (const std::invalid_argument& e) {
      answer(invalid_request(e.what()));
    } catch (const std::exception& e) {
      answer(ApiError(500, fmt::format("internal error: {}", e.what()), "server_error"));
    }
  };
}

ApiError http_layer_error(int status, const std::string& message) {
  auto code = [status]() -> std::string {
    switch (status) {
      case 404: return "unknown_url";
      case 405: return "method_not_allowed";
      case 408: return "request_timeout";
      case 413: return "request_too_large";
      case 414: return "uri_too_long";
      case 415: return "unsupported_media_type";
      case 431: return "headers_too_large";
      case 503: return "too_many_connections";
      default: return "";
    }
  };
  const std::string type = status >= 500 && status != 503 ? "server_error" : "invalid_request_error";
  return ApiError(status, message, type, "", code());
}

}  // namespace nanoserve::server
