// What every route shares: the served model (none while it loads), the limits, the metrics
// and the API key.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "server/limits.h"
#include "server/metrics.h"
#include "server/served_model.h"

namespace nanoserve::server {

class ServerState {
 public:
  ServerState(ServerLimits limits, std::string api_key);

  // The model, once loaded; nullptr before (health says "loading", the API answers 503).
  std::shared_ptr<const ServedModel> model() const;
  // Throws ApiError 503 while the model loads.
  std::shared_ptr<const ServedModel> loaded_model() const;
  void set_model(std::shared_ptr<const ServedModel> model);

  const ServerLimits& limits() const { return limits_; }
  const std::string& api_key() const { return api_key_; }  // empty: no key needed
  ServerMetrics& metrics() { return metrics_; }
  // The server is stopping (draining): /health says so, answers that would go on forever (an
  // event stream) end.
  void begin_stopping() { stopping_ = true; }
  bool stopping() const { return stopping_; }
  // The drain's time is up: generations still streaming end with an error event.
  void cut_generations() { generations_cut_ = true; }
  bool generations_cut() const { return generations_cut_; }

 private:
  const ServerLimits limits_;
  const std::string api_key_;
  ServerMetrics metrics_;
  std::atomic<bool> stopping_ = false;
  std::atomic<bool> generations_cut_ = false;
  mutable std::mutex model_mutex_;
  std::shared_ptr<const ServedModel> model_;
};

}  // namespace nanoserve::server
