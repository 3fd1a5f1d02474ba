#include <nlohmann/json.hpp>

#include <optional>

#include "server/http_errors.h"
#include "server/response_json.h"
#include "server/routes.h"

namespace nanoserve::server {
namespace {

void health(httplib::Response& res, const ServerState& state) {
  const bool loaded = state.model() != nullptr;
  res.status = loaded ? 200 : 503;
  res.set_content(json_text({{"status", loaded ? "ok" : "loading"}}), "application/json");
}

void models(httplib::Response& res, const ServerState& state) {
  const auto model = state.loaded_model();
  const nlohmann::ordered_json entry = {
      {"id", model->name()}, {"object", "model"}, {"created", model->created()}, {"owned_by", "nanoserve"}};
  res.set_content(json_text({{"object", "list"}, {"data", nlohmann::ordered_json::array({entry})}}), "application/json");
}

void metrics(httplib::Response& res, ServerState& state) {
  const auto model = state.model();
  std::optional<engine::EngineMetrics> engine;
  if (model) engine = model->engine().metrics();
  res.set_content(state.metrics().prometheus_text(engine), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace

void add_info_routes(httplib::Server& http, ServerState& state) {
  http.Get("/health", with_api_errors([&state](const httplib::Request&, httplib::Response& res) { health(res, state); }));
  http.Get("/v1/models",
           with_api_errors([&state](const httplib::Request&, httplib::Response& res) { models(res, state); }));
  http.Get("/metrics", with_api_errors([&state](const httplib::Request&, httplib::Response& res) { metrics(res, state); }));
}

}  // namespace nanoserve::server
