// Error responses: ApiError and the engine's refusals become OpenAI-shaped JSON bodies.
#pragma once

#include <httplib.h>

#include "server/api_error.h"

namespace nanoserve::server {

void send_error(httplib::Response& res, const ApiError& error);

// Runs `handler`, answering what it throws: ApiError as itself, engine::QueueFull 429,
// std::invalid_argument (a request the engine refused) 400, anything else 500.
httplib::Server::Handler with_api_errors(httplib::Server::Handler handler);

// For responses httplib makes itself (404 unknown route, 413 body too large, 400 bad
// request line): the same JSON error shape. Leaves responses that have a body alone.
httplib::Server::HandlerResponse fill_in_error_body(const httplib::Request& req, httplib::Response& res,
                                                     size_t max_body_bytes);

}  // namespace nanoserve::server
