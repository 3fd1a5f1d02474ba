#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace nanoserve::server {

ApiError::ApiError(int status_, std::string message, std::string type_, std::string param_, std::string code_)
    : std::runtime_error(std::move(message)),
      status(status_),
      type(std::move(type_)),
      param(std::move(param_)),
      code(std::move(code_)) {}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  return ApiError(400, std::move(message), "invalid_request_error", std::move(param), std::move(code));
}

ApiError generation_failed(const std::string& message) {
  return ApiError(500, "generation failed: " + message, "server_error");
}

nlohmann::ordered_json error_body(const ApiError& error) {
  auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s); };
  return {{"error",
           {{"message", error.what()}, {"type", error.type}, {"param", or_null(error.param)},
            {"code", or_null(error.code)}}}};
}

}  // namespace nanoserve::server
