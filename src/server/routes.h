// The HTTP routes: the OpenAI-compatible API and the operational endpoints.
#pragma once

#include <httplib.h>

#include "server/server_state.h"

namespace nanoserve::server {

// POST /v1/chat/completions and POST /v1/completions.
void add_generation_routes(httplib::Server& http, ServerState& state);
// GET /health, GET /v1/models, GET /metrics.
void add_info_routes(httplib::Server& http, ServerState& state);

}  // namespace nanoserve::server
