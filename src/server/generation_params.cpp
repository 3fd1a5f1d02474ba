#include "server/generation_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/response_format.h"

namespace nanoserve::server {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

int32_t parse_token_id(const std::string& key) {
  int32_t id = -1;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
  if (error != std::errc() || end != key.data() + key.size() || id < 0)
    throw invalid_request(fmt::format("'logit_bias' keys must be token ids, got '{}'", key), "logit_bias",
                          "invalid_value");
  return id;
}

std::map<int32_t, float> parse_logit_bias(const FieldReader& fields, const ServerLimits& limits) {
  const nlohmann::ordered_json* bias = fields.object("logit_bias");
  if (!bias) return {};
  if (bias->size() > limits.max_logit_bias)
    throw invalid_request(fmt::format("'logit_bias' has {} entries; at most {} are allowed", bias->size(),
                                      limits.max_logit_bias), "logit_bias", "too_many_logit_bias_entries");
  std::map<int32_t, float> out;
  for (const auto& [key, value] : bias->items()) {
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
      throw invalid_request(fmt::format("'logit_bias' values must be numbers from -100 to 100 (token {})", key),
                            "logit_bias", "invalid_value");
    out[parse_token_id(key)] = value.get<float>();
  }
  return out;
}

}  // namespace

std::vector<std::string> read_stop_strings(const FieldReader& fields, const std::string& name,
                                           const ServerLimits& limits) {
  const nlohmann::ordered_json* stop = fields.find(name);
  if (!stop) return {};
  const std::string param = fields.param(name);
  const std::string wrong_type = fmt::format("'{}' must be a string or an array of strings", param);
  if (!stop->is_string() && !stop->is_array()) throw invalid_request(wrong_type, param, "invalid_type");
  const nlohmann::ordered_json list = stop->is_string() ? nlohmann::ordered_json::array({*stop}) : *stop;
  if (list.size() > limits.max_stop_strings)
    throw invalid_request(fmt::format("'{}' has {} strings; at most {} are allowed", param, list.size(),
                                      limits.max_stop_strings), param, "too_many_stop_strings");
  std::vector<std::string> out;
  for (const auto& s : list) {
    if (!s.is_string()) throw invalid_request(wrong_type, param, "invalid_type");
    const auto& text = s.get_ref<const std::string&>();
    if (text.empty())
      throw invalid_request(fmt::format("'{}' strings must not be empty", param), param, "invalid_value");
    if (text.size() > limits.max_stop_bytes)
      throw invalid_request(fmt::format("'{}' strings may be at most {} bytes long", param, limits.max_stop_bytes),
                            param, "stop_string_too_long");
    out.push_back(text);
  }
  return out;
}

std::optional<int32_t> read_max_tokens(const FieldReader& fields, const std::string& name, const ServerLimits& limits) {
  const auto n = fields.integer(name, kInt64Min, kInt64Max);
  if (!n) return std::nullopt;
  const std::string param = fields.param(name);
  if (*n < 1) throw invalid_request(fmt::format("'{}' must be at least 1, got {}", param, *n), param, "out_of_range");
  if (*n > limits.max_tokens)
    throw invalid_request(fmt::format("'{}' is {}; this server generates at most {} tokens per request", param, *n,
                                      limits.max_tokens), param, "out_of_range");
  return static_cast<int32_t>(*n);
}

void read_max_tokens_cap(const FieldReader& fields, const std::string& name, const ServerLimits& limits,
                         GenerationParams& p) {
  if (const auto n = fields.integer(name, 1, kInt64Max))
    p.max_tokens = static_cast<int32_t>(std::min<int64_t>(*n, limits.max_tokens));
  p.max_tokens_is_cap = true;
  p.max_tokens_param = fields.param(name);
}

engine::SamplingParams read_sampling(const FieldReader& fields, uint64_t random_seed) {
  engine::SamplingParams s;
  s.temperature = static_cast<float>(fields.number("temperature", 0, 2).value_or(1.0));
  s.top_p = static_cast<float>(fields.number("top_p", 0, 1).value_or(1.0));
  s.top_k = static_cast<int>(fields.integer("top_k", 0, std::numeric_limits<int>::max()).value_or(0));
  s.min_p = static_cast<float>(fields.number("min_p", 0, 1).value_or(0.0));
  s.presence_penalty = static_cast<float>(fields.number("presence_penalty", -2, 2).value_or(0.0));
  s.frequency_penalty = static_cast<float>(fields.number("frequency_penalty", -2, 2).value_or(0.0));
  s.repeat_penalty = static_cast<float>(fields.number("repeat_penalty", 0.01, 10).value_or(1.0));
  const auto seed = fields.integer("seed", kInt64Min, kInt64Max);
  s.seed = seed ? static_cast<uint64_t>(*seed) : random_seed;
  return s;
}

GenerationParams parse_generation_params(const nlohmann::ordered_json& body, const ServerLimits& limits,
                                         uint64_t random_seed) {
  const FieldReader fields(body);
  GenerationParams p;
  p.sampling = read_sampling(fields, random_seed);
  // max_completion_tokens is the newer name; it wins when both are given.
  p.max_tokens = read_max_tokens(fields, "max_tokens", limits);
  if (auto newer = read_max_tokens(fields, "max_completion_tokens", limits)) {
    p.max_tokens = newer;
    p.max_tokens_param = "max_completion_tokens";
  }

  p.stop = read_stop_strings(fields, "stop", limits);
  p.logit_bias = parse_logit_bias(fields, limits);
  p.ignore_eos = fields.boolean("ignore_eos").value_or(false);
  p.cache_prompt = fields.boolean("cache_prompt").value_or(true);
  p.speculative = fields.boolean("speculative").value_or(true);
  p.n = static_cast<int32_t>(fields.integer("n", 1, limits.max_choices).value_or(1));
  p.grammar = parse_response_format(fields);
  if (p.grammar && p.ignore_eos)
    throw invalid_request("'ignore_eos' cannot be used with a JSON response_format: the output ends where the JSON "
                          "does", "ignore_eos", "unsupported_combination");
  p.stream = fields.boolean("stream").value_or(false);
  if (const nlohmann::ordered_json* options = fields.object("stream_options")) {
    if (!p.stream)
      throw invalid_request("'stream_options' is only allowed when 'stream' is true", "stream_options",
                            "invalid_value");
    p.include_usage = FieldReader(*options, "stream_options").boolean("include_usage").value_or(false);
  }
  return p;
}

}  // namespace nanoserve::server
