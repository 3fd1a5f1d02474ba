// The HTTP routes: the OpenAI-compatible API and the operational endpoints.
#pragma once

#include <vector>

#include "http/server.h"
#include "server/server_state.h"

namespace nanoserve::server {

// POST /v1/chat/completions and POST /v1/completions.
std::vector<http::Route> generation_routes(ServerState& state);
// GET /health (answered on the event loop), GET /v1/models, GET /metrics.
std::vector<http::Route> info_routes(ServerState& state);

}  // namespace nanoserve::server
