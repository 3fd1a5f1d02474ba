// Error responses: ApiError and the engine's refusals become OpenAI-shaped JSON bodies.
#pragma once

#include <string>

#include "http/response.h"
#include "http/server.h"
#include "server/api_error.h"

namespace nanoserve::server {

http::Response error_response(const ApiError& error);

// Runs `handler`, answering what it throws: ApiError as itself, engine::QueueFull 429,
// std::invalid_argument (a request the engine refused) 400, anything else 500.
http::Handler with_api_errors(http::Handler handler);

// For errors the HTTP layer finds itself (malformed framing, a limit, an unknown route, too
// many connections): the same JSON error shape, with a code a program can test.
http::Response http_layer_error(int status, const std::string& message);

}  // namespace nanoserve::server
