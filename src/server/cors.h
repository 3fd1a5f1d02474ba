// Cross-origin requests from browser apps, allowed for one origin (or "*") with
// --cors-origin: every answer carries Access-Control-Allow-Origin, and a preflight (OPTIONS
// with Access-Control-Request-Method) is answered 204 before any API key is asked for, as
// browsers send preflights without credentials. Off (no header, OPTIONS refused) by default.
#pragma once

#include <string>
#include <vector>

#include "http/request.h"
#include "http/response.h"

namespace nanoserve::server {

std::vector<http::Header> cors_headers(const std::string& origin);
bool is_preflight(const http::Request& head);
http::Response preflight_response(const std::string& origin, const http::Request& head);

}  // namespace nanoserve::server
