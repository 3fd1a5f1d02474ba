#include "server/server_state.h"

#include <utility>

#include "server/api_error.h"

namespace nanoserve::server {

ServerState::ServerState(ServerLimits limits, std::string api_key)
    : limits_(limits), api_key_(std::move(api_key)) {}

std::shared_ptr<const ServedModel> ServerState::model() const {
  std::lock_guard lock(model_mutex_);
  return model_;
}

std::shared_ptr<const ServedModel> ServerState::loaded_model() const {
  auto m = model();
  if (!m) throw ApiError(503, "the model is still loading; try again shortly", "server_error", "", "model_loading");
  return m;
}

void ServerState::set_model(std::shared_ptr<const ServedModel> model) {
  std::lock_guard lock(model_mutex_);
  model_ = std::move(model);
}

}  // namespace nanoserve::server
