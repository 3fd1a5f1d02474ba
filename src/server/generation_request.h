// The engine's GenerationRequest for a checked request: the prompt and max_tokens fitted to
// the model's context, logit_bias checked against the vocabulary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/generation_params.h"
#include "server/limits.h"

namespace nanoserve::server {

struct ModelBounds {
  int64_t context_size = 0;  // prompt + generated tokens must fit
  int64_t n_vocab = 0;
};

// Throws ApiError (400): an empty prompt or one that fills the context (param
// `prompt_param`), max_tokens beyond the room left (param max_tokens; unless it is only a
// cap), a logit_bias id outside the vocabulary. Without max_tokens the request may fill the
// context, up to the server's limit.
engine::GenerationRequest make_generation_request(std::string id, std::vector<int32_t> prompt,
                                                  const GenerationParams& params, const ModelBounds& model,
                                                  const ServerLimits& limits, const std::string& prompt_param);

}  // namespace nanoserve::server
