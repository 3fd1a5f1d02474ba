#include <fmt/format.h>

#include <charconv>
#include <chrono>

#include "server/api_error.h"
#include "server/http_errors.h"
#include "server/query_string.h"
#include "server/response_json.h"
#include "server/routes.h"
#include "server/sse.h"
#include "server/trace_json.h"

namespace nanoserve::server {
namespace {

constexpr int64_t kDefaultTimelines = 16;
// Event streams of the engine at once: each holds a worker thread for as long as it is watched.
constexpr size_t kMaxWatchers = 4;
// How often a watched stream checks whether the server is stopping when the engine is idle.
constexpr std::chrono::milliseconds kIdleCheck{200};

engine::EngineTrace& trace_of(const ServedModel& model) {
  engine::EngineTrace* trace = model.engine().trace();
  if (!trace)
    throw ApiError(404, "this engine records no timelines or events: the batch engine does (serve --engine batch)",
                   "invalid_request_error");
  return *trace;
}

int64_t last_parameter(const std::string& text) {
  const auto max = static_cast<int64_t>(engine::EngineTrace::kKeptTimelines);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > max)
    throw invalid_request(fmt::format("last must be a whole number from 1 to {} (the timelines kept), not \"{}\"",
                                      max, text), "last");
  return value;
}

// GET /v1/timelines: the most recent requests' timelines (?last=N, newest first), or one
// request's (?id=ID: one timeline per choice).
void timelines(const http::Request& req, http::ResponseWriter& res, ServerState& state) {
  const auto model = state.loaded_model();
  const engine::EngineTrace& trace = trace_of(*model);
  const auto parameters = query_parameters(req.target);
  for (const auto& [name, value] : parameters)
    if (name != "id" && name != "last")
      throw invalid_request(fmt::format("unknown query parameter \"{}\" (id or last)", name), name);
  std::vector<std::shared_ptr<const engine::RequestTimeline>> found;
  if (const auto id = parameters.find("id"); id != parameters.end()) {
    if (parameters.contains("last")) throw invalid_request("give id or last, not both", "last");
    found = trace.find(id->second);
    if (found.empty())
      throw ApiError(404, fmt::format("no timeline of request \"{}\": the last {} requests' are kept", id->second,
                                      engine::EngineTrace::kKeptTimelines),
                     "invalid_request_error", "id");
  } else {
    const auto last = parameters.find("last");
    found = trace.recent(static_cast<size_t>(last == parameters.end() ? kDefaultTimelines : last_parameter(last->second)));
  }
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (const auto& t : found) data.push_back(timeline_json(t->snapshot()));
  res.send(json_response({{"object", "list"}, {"data", std::move(data)}}));
}

// GET /v1/engine/events: a `snapshot` event whenever the engine publishes one (engine_trace.h),
// until the client goes or the server stops.
void engine_events(http::ResponseWriter& res, ServerState& state) {
  const auto model = state.loaded_model();
  const auto subscription = trace_of(*model).subscribe(kMaxWatchers);
  if (!subscription)
    throw ApiError(429, fmt::format("{} clients already watch the engine's events: close one and retry", kMaxWatchers),
                   "rate_limit_error");
  SseWriter sse = start_event_stream(res);
  while (!state.stopping() && sse.ok() && !res.client_gone() && !subscription->closed())
    if (const auto snapshot = subscription->next(kIdleCheck)) sse.send_named("snapshot", snapshot_json(*snapshot));
  res.end_stream();
}

}  // namespace

std::vector<http::Route> trace_routes(ServerState& state) {
  using http::Request;
  using http::ResponseWriter;
  return {
      {.method = "GET", .path = "/v1/timelines",
       .handler = with_api_errors([&state](const Request& req, ResponseWriter& res) { timelines(req, res, state); }),
       .on_event_loop = false},
      {.method = "GET", .path = "/v1/engine/events",
       .handler = with_api_errors([&state](const Request&, ResponseWriter& res) { engine_events(res, state); }),
       .on_event_loop = false},
  };
}

}  // namespace nanoserve::server
