// Error responses: ApiError and the engine's refusals become JSON bodies in the API's own
// shape (OpenAI's unless another is given).
#pragma once

#include <string>

#include "http/response.h"
#include "http/server.h"
#include "server/api_error.h"

namespace nanoserve::server {

http::Response error_response(const ApiError& error, ErrorBody body = error_body);

// Runs `handler`, answering what it throws: ApiError as itself, engine::QueueFull 429,
// std::invalid_argument (a request the engine refused) 400, anything else 500.
http::Handler with_api_errors(http::Handler handler, ErrorBody body = error_body);

// An error the HTTP layer finds itself (malformed framing, a limit, an unknown route, too
// many connections), with a code a program can test.
ApiError http_layer_error(int status, const std::string& message);

}  // namespace nanoserve::server
