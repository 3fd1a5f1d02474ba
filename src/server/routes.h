// The HTTP routes: the OpenAI-compatible API, the operational endpoints and the chat page.
#pragma once

#include <string_view>
#include <vector>

#include "http/server.h"
#include "server/server_state.h"

namespace nanoserve::server {

// POST /v1/chat/completions and POST /v1/completions.
std::vector<http::Route> generation_routes(ServerState& state);
// GET /health (answered on the event loop), GET /v1/models, GET /metrics.
std::vector<http::Route> info_routes(ServerState& state);
// The engine's trace, for the lab's pages (engine/engine_trace.h): GET /v1/timelines (recent
// requests' timelines, or one request's: ?id=) and GET /v1/engine/events (live snapshots of the
// batch engine, as server-sent events).
std::vector<http::Route> trace_routes(ServerState& state);
// The chat page (web/, built into the binary): GET / is its index.html, GET /<name> each of its
// other files (HEAD too: the HTTP layer answers it with the GET route).
std::vector<http::Route> static_routes();
// Whether `path` is one of the chat page's: those need no API key, as a browser's navigation
// cannot send one (the page sends the key with its own API calls).
bool is_static_page(std::string_view path);

}  // namespace nanoserve::server
