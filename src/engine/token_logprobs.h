// Log-probabilities for the logprobs a request asks for: the log-softmax of the logits the
// token was sampled from, after logit_bias and a grammar's mask and before temperature and the
// sampler's filters (top-k, top-p, min-p): the model's own distribution over what the request
// allows, the same at any temperature.
#pragma once

#include <cstdint>
#include <span>

#include "engine/engine.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::engine {

// The most alternatives a request may ask for (OpenAI's bound for top_logprobs).
inline constexpr int32_t kMaxTopLogprobs = 20;

// `chosen`'s log-probability under `logits` and the `top` most likely tokens (ties: lower id
// first), each with its bytes.
TokenLogprobs token_logprobs(std::span<const float> logits, int32_t chosen, int32_t top,
                             const tokenizer::Tokenizer& tokenizer);

}  // namespace nanoserve::engine
