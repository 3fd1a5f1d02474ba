// POST /v1/completions: the request body, checked. The prompt is one text or one list of
// token ids (a batch of prompts is refused: n and batches beyond one are not supported).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "server/generation_params.h"
#include "server/limits.h"

namespace nanoserve::server {

struct CompletionRequest {
  std::variant<std::string, std::vector<int32_t>> prompt;  // text, or token ids as given
  GenerationParams params;
};

// Throws ApiError (400) naming the field at fault.
CompletionRequest parse_completion_request(const nlohmann::ordered_json& body, const ServerLimits& limits,
                                           uint64_t random_seed);

}  // namespace nanoserve::server
