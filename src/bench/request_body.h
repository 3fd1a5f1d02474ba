// The benchmark's requests: a prompt of exactly N tokens (random ids drawn from tokens that
// stream text, seeded, so both arms of a comparison see the same one), greedy decoding,
// ignore_eos and a logit_bias banning every token that streams no text, so a request makes
// exactly max_tokens tokens and each arrives as one chunk. The same request is built for
// HTTP (/v1/completions with token ids) and for an engine in-process.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_model.h"
#include "engine/engine.h"

namespace nanoserve::bench {

struct BenchRequest {
  std::vector<int32_t> prompt;
  int max_tokens = 16;
  std::vector<int32_t> banned;  // logit_bias -100
  bool speculative = true;      // false: "speculative": false, the server's drafter leaves it alone
};

// `n` token ids from `model.text_tokens`, the same for the same seed.
std::vector<int32_t> random_prompt(const BenchModel& model, int n, uint64_t seed);

BenchRequest bench_request(const BenchModel& model, int prompt_tokens, int max_tokens, uint64_t seed);

// The /v1/completions body ("model" only when not empty; the client adds "stream").
nlohmann::json completion_body(const BenchRequest& request, const std::string& model_name);

// The same request for Engine::submit.
engine::GenerationRequest engine_request(const BenchRequest& request, const std::string& id);

}  // namespace nanoserve::bench
