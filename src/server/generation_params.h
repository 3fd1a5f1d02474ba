// The request fields /v1/chat/completions and /v1/completions share: sampling, stop
// strings, logit_bias, max_tokens, response_format and streaming. Options nanoserve cannot honour (n > 1,
// ...) are refused with 400 rather than ignored. logprobs are read by each endpoint's parser:
// the two name them differently.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "grammar/grammar.h"
#include "server/json_fields.h"
#include "server/limits.h"

namespace nanoserve::server {

struct GenerationParams {
  engine::SamplingParams sampling;
  std::map<int32_t, float> logit_bias;  // token ids not yet checked against the vocabulary
  std::optional<int32_t> max_tokens;    // none: as many as the context and the server allow
  std::string max_tokens_param = "max_tokens";  // the field it came from, for errors
  // max_tokens is only a cap (Anthropic's, Ollama's num_predict): past the room the context
  // leaves, the reply gets that room rather than a 400.
  bool max_tokens_is_cap = false;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool cache_prompt = true;             // llama-server's field: false skips the prefix cache
  bool speculative = true;              // false: no speculative decoding for this request
  std::shared_ptr<const grammar::Grammar> grammar;  // response_format's; null: free text
  bool logprobs = false;    // each token's log-probability (chat: logprobs; completions: logprobs >= 0)
  int32_t top_logprobs = 0; // and this many alternatives (chat: top_logprobs; completions: logprobs)
  int32_t n = 1;            // choices, each its own sequence from the one prompt (seeds seed, seed + 1, ...)
  bool stream = false;
  bool include_usage = false;           // stream_options.include_usage
};

// Throws ApiError (400) naming the field at fault. `random_seed` is used when the request
// has no seed.
GenerationParams parse_generation_params(const nlohmann::ordered_json& body, const ServerLimits& limits,
                                         uint64_t random_seed);

// The pieces, for the other APIs to read their own fields with (each throws ApiError 400
// naming the field):
// the sampling fields by OpenAI's names (temperature, top_p, top_k, min_p, presence_penalty,
// frequency_penalty, repeat_penalty, seed), which Anthropic's body and Ollama's options share;
engine::SamplingParams read_sampling(const FieldReader& fields, uint64_t random_seed);
// stop strings (one string or an array), within the server's limits;
std::vector<std::string> read_stop_strings(const FieldReader& fields, const std::string& name,
                                           const ServerLimits& limits);
// a token count from 1 to the server's max_tokens;
std::optional<int32_t> read_max_tokens(const FieldReader& fields, const std::string& name, const ServerLimits& limits);
// a token count of 1 or more that is only a cap (Anthropic's max_tokens, the Responses API's
// max_output_tokens): into `p` as max_tokens, lowered to the server's limit, with max_tokens_is_cap.
void read_max_tokens_cap(const FieldReader& fields, const std::string& name, const ServerLimits& limits,
                         GenerationParams& p);

}  // namespace nanoserve::server
