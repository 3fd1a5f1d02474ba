// Errors the API answers with, in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "max_tokens", "code": null}}
// Request parsing throws ApiError; the routes turn it into the status and body.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <stdexcept>
#include <string>

namespace nanoserve::server {

struct ApiError : std::runtime_error {
  ApiError(int status, std::string message, std::string type, std::string param = "", std::string code = "");

  int status;
  std::string type;
  std::string param;  // the request field at fault; empty = none (null in the body)
  std::string code;   // a machine-readable reason; empty = none (null in the body)
};

// 400 invalid_request_error naming the field at fault.
ApiError invalid_request(std::string message, std::string param = "", std::string code = "");
// 500 server_error: the engine failed the request (`message` is its error).
ApiError generation_failed(const std::string& message);

// OpenAI's error body (above).
nlohmann::ordered_json error_body(const ApiError& error);

// How an API writes an error's body: each API has its own shape (error_body is OpenAI's).
using ErrorBody = nlohmann::ordered_json (*)(const ApiError&);

}  // namespace nanoserve::server
