#include "server/generation_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "server/api_error.h"

namespace nanoserve::server {

engine::GenerationRequest make_generation_request(std::string id, std::vector<int32_t> prompt,
                                                  const GenerationParams& params, const ModelBounds& model,
                                                  const ServerLimits& limits, const std::string& prompt_param) {
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  if (n_prompt == 0) throw invalid_request("the prompt is empty", prompt_param, "empty_prompt");
  if (n_prompt >= model.context_size)
    throw invalid_request(fmt::format("the prompt has {} tokens; this model's context holds {}, and at least one "
                                      "must be left for the reply", n_prompt, model.context_size),
                          prompt_param, "context_length_exceeded");
  const int64_t room = model.context_size - n_prompt;
  if (params.max_tokens && *params.max_tokens > room && !params.max_tokens_is_cap)
    throw invalid_request(fmt::format("this model's context holds {} tokens; you asked for {} ({} in the prompt, {} "
                                      "for the reply)", model.context_size, n_prompt + *params.max_tokens, n_prompt,
                                      *params.max_tokens),
                          params.max_tokens_param, "context_length_exceeded");
  for (const auto& [token, bias] : params.logit_bias)
    if (token >= model.n_vocab)
      throw invalid_request(fmt::format("'logit_bias' names token {}, outside the vocabulary (0..{})", token,
                                        model.n_vocab - 1), "logit_bias", "invalid_token_id");

  engine::GenerationRequest r;
  r.id = std::move(id);
  r.prompt = std::move(prompt);
  r.sampling = params.sampling;
  r.logit_bias = params.logit_bias;
  const auto most = static_cast<int32_t>(std::min<int64_t>(room, limits.max_tokens));
  r.max_tokens = params.max_tokens ? std::min(*params.max_tokens, most) : most;
  r.stop = params.stop;
  r.ignore_eos = params.ignore_eos;
  r.cache_prompt = params.cache_prompt;
  r.speculative = params.speculative;
  r.logprobs = params.logprobs;
  r.top_logprobs = params.top_logprobs;
  return r;
}

}  // namespace nanoserve::server
