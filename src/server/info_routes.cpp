#include <nlohmann/json.hpp>

#include <optional>

#include "server/http_errors.h"
#include "server/response_json.h"
#include "server/routes.h"

namespace nanoserve::server {
namespace {

// 200 only while the server takes requests: a balancer sends none while it loads or drains.
void health(http::ResponseWriter& res, const ServerState& state) {
  if (state.stopping()) return res.send(json_response({{"status", "draining"}}, 503));
  const bool loaded = state.model() != nullptr;
  res.send(json_response({{"status", loaded ? "ok" : "loading"}}, loaded ? 200 : 503));
}

void models(http::ResponseWriter& res, const ServerState& state) {
  const auto model = state.loaded_model();
  const nlohmann::ordered_json entry = {
      {"id", model->name()}, {"object", "model"}, {"created", model->created()}, {"owned_by", "nanoserve"}};
  res.send(json_response({{"object", "list"}, {"data", nlohmann::ordered_json::array({entry})}}));
}

void metrics(http::ResponseWriter& res, ServerState& state) {
  const auto model = state.model();
  std::optional<engine::EngineMetrics> engine;
  if (model) engine = model->engine().metrics();
  res.send({.status = 200, .content_type = "text/plain; version=0.0.4; charset=utf-8", .headers = {},
            .body = state.metrics().prometheus_text(engine)});
}

}  // namespace

std::vector<http::Route> info_routes(ServerState& state) {
  using http::Request;
  using http::ResponseWriter;
  return {
      {.method = "GET", .path = "/health",
       .handler = with_api_errors([&state](const Request&, ResponseWriter& res) { health(res, state); }),
       .on_event_loop = true, .while_draining = true},
      {.method = "GET", .path = "/v1/models",
       .handler = with_api_errors([&state](const Request&, ResponseWriter& res) { models(res, state); }),
       .on_event_loop = false},
      {.method = "GET", .path = "/metrics",
       .handler = with_api_errors([&state](const Request&, ResponseWriter& res) { metrics(res, state); }),
       .on_event_loop = false, .while_draining = true},
  };
}

}  // namespace nanoserve::server
