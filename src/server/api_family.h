// An API the server speaks beside OpenAI's (Anthropic's messages, Ollama's, ...): its routes,
// and the error shape of every answer under its paths, the HTTP layer's own errors (an unknown
// route, a body past the limit, a missing API key) included. Each lives in a room of its own
// above this one; the command that starts the server hands them to HttpServer.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "http/server.h"
#include "server/api_error.h"
#include "server/server_state.h"

namespace nanoserve::server {

struct ApiFamily {
  std::vector<std::string> path_prefixes;  // "/v1/messages", "/api/"
  ErrorBody error_body = nullptr;
  // Its routes; HttpServer answers what their handlers throw (with_api_errors) in error_body's shape.
  std::function<std::vector<http::Route>(ServerState&)> routes;
};

// The error shape for a request to `path`: the first family with a prefix of it, else OpenAI's.
ErrorBody error_body_for(const std::vector<ApiFamily>& families, std::string_view path);

}  // namespace nanoserve::server
