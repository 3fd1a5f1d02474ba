#include "server/completion_request.h"

#include <limits>

#include "server/api_error.h"
#include "server/json_fields.h"

namespace nanoserve::server {
namespace {

std::vector<int32_t> token_ids(const nlohmann::ordered_json& ids) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw invalid_request("'prompt' must be a string or an array of token ids", "prompt", "invalid_type");
    out.push_back(id.get<int32_t>());
  }
  return out;
}

// A string, an array of token ids, or a batch of one of either.
std::variant<std::string, std::vector<int32_t>> parse_prompt(const nlohmann::ordered_json* prompt) {
  if (!prompt) throw invalid_request("'prompt' is required", "prompt", "missing_required_parameter");
  if (prompt->is_string()) return prompt->get<std::string>();
  if (!prompt->is_array())
    throw invalid_request("'prompt' must be a string or an array of token ids", "prompt", "invalid_type");
  if (prompt->empty()) throw invalid_request("'prompt' must not be empty", "prompt", "empty_array");
  const nlohmann::ordered_json& first = prompt->front();
  if (first.is_string() || first.is_array()) {
    if (prompt->size() > 1)
      throw invalid_request("only one prompt per request is supported", "prompt", "unsupported_value");
    return first.is_string() ? parse_prompt(&first) : token_ids(first);
  }
  return token_ids(*prompt);
}

// Options of the legacy completions API that ask for something nanoserve does not do.
void refuse_unsupported(const FieldReader& fields) {
  if (fields.boolean("echo").value_or(false))
    throw invalid_request("echo is not supported", "echo", "unsupported_parameter");
  if (!fields.string("suffix").value_or("").empty())
    throw invalid_request("suffix is not supported", "suffix", "unsupported_parameter");
  if (fields.integer("best_of", 1, std::numeric_limits<int64_t>::max()).value_or(1) != 1)
    throw invalid_request("only best_of=1 is supported", "best_of", "unsupported_value");
}

}  // namespace

CompletionRequest parse_completion_request(const nlohmann::ordered_json& body, const ServerLimits& limits,
                                           uint64_t random_seed) {
  const FieldReader fields(body);
  refuse_unsupported(fields);
  CompletionRequest r;
  r.prompt = parse_prompt(fields.find("prompt"));
  r.params = parse_generation_params(body, limits, random_seed);
  // logprobs: N (0 to 5, OpenAI's bound here): each token's log-probability and N alternatives.
  if (const auto top = fields.integer("logprobs", 0, 5)) {
    r.params.logprobs = true;
    r.params.top_logprobs = static_cast<int32_t>(*top);
  }
  return r;
}

}  // namespace nanoserve::server
