#include "server/cors.h"

namespace nanoserve::server {

std::vector<http::Header> cors_headers(const std::string& origin) {
  std::vector<http::Header> headers = {{"Access-Control-Allow-Origin", origin}};
  if (origin != "*") headers.push_back({"Vary", "Origin"});
  return headers;
}

bool is_preflight(const http::Request& head) {
  return head.method == "OPTIONS" && head.find_header("access-control-request-method") != nullptr;
}

http::Response preflight_response(const std::string& origin, const http::Request& head) {
  http::Response r{.status = 204, .content_type = "", .headers = cors_headers(origin), .body = {}};
  r.headers.push_back({"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"});
  // The headers the browser says it will send (SDKs add their own: x-stainless-*, anthropic-*).
  const std::string* asked = head.find_header("access-control-request-headers");
  r.headers.push_back({"Access-Control-Allow-Headers", asked ? *asked : "authorization, content-type, x-api-key"});
  r.headers.push_back({"Access-Control-Max-Age", "86400"});
  return r;
}

}  // namespace nanoserve::server
