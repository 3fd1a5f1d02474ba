#include "bench/request_body.h"

#include <random>

namespace nanoserve::bench {
namespace {

constexpr float kBan = -100.0f;  // the lowest bias OpenAI's API allows

}  // namespace

std::vector<int32_t> random_prompt(const BenchModel& model, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, model.text_tokens.size() - 1);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) id = model.text_tokens[pick(rng)];
  return ids;
}

BenchRequest bench_request(const BenchModel& model, int prompt_tokens, int max_tokens, uint64_t seed) {
  return {.prompt = random_prompt(model, prompt_tokens, seed), .max_tokens = max_tokens, .banned = model.silent_tokens};
}

nlohmann::json completion_body(const BenchRequest& request, const std::string& model_name) {
  nlohmann::json bias = nlohmann::json::object();
  for (const int32_t id : request.banned) bias[std::to_string(id)] = kBan;
  nlohmann::json body = {
      {"prompt", request.prompt},
      {"max_tokens", request.max_tokens},
      {"temperature", 0},
      {"ignore_eos", true},
      {"stream_options", {{"include_usage", true}}},
  };
  if (!request.banned.empty()) body["logit_bias"] = std::move(bias);
  if (!request.speculative) body["speculative"] = false;
  if (!model_name.empty()) body["model"] = model_name;
  return body;
}

engine::GenerationRequest engine_request(const BenchRequest& request, const std::string& id) {
  engine::GenerationRequest r;
  r.id = id;
  r.prompt = request.prompt;
  r.sampling.temperature = 0.0f;
  for (const int32_t banned : request.banned) r.logit_bias[banned] = kBan;
  r.max_tokens = request.max_tokens;
  r.ignore_eos = true;
  r.speculative = request.speculative;
  return r;
}

}  // namespace nanoserve::bench
