// What the procedures share: parameters read from the merged JSON, prompt lengths fitted to the
// context, the benchmark's requests, and the engine's figures with the client's standing in.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/request_body.h"
#include "bench/stream_record.h"
#include "lab/lab_context.h"

namespace nanoserve::lab {

// Room left in a server's context beyond a request's prompt and generated tokens.
inline constexpr int64_t kContextMargin = 16;

int parameter_int(const nlohmann::json& parameters, const std::string& name);
std::vector<int64_t> parameter_ints(const nlohmann::json& parameters, const std::string& name);

// Prompt lengths that fit in `limit` tokens: when the longest does not, every length is scaled
// by the same factor (their ratios are what the experiment compares), and a note says so.
struct FittedLengths {
  std::vector<int64_t> lengths;
  std::string note;  // empty when nothing changed
};
FittedLengths fit_lengths(const std::vector<int64_t>& wanted, int64_t limit, const std::string& why);

// The longest prompt one request generating `max_tokens` may have in this session, and why.
int64_t prompt_limit(const LabContext& lab, int64_t max_tokens);
std::string limit_reason(const LabContext& lab);

// A server context for a prompt of `prompt` tokens generating `max_tokens`.
int64_t server_context(const LabContext& lab, int64_t prompt, int64_t max_tokens);

// The benchmark's request: `prompt` random text tokens, greedy, exactly `max_tokens` tokens.
bench::BenchRequest lab_request(const LabContext& lab, int64_t prompt, int64_t max_tokens, uint64_t seed);

double median(std::vector<double> values);
// The engine's figure when the server reports one, else the client's.
double engine_ttft_ms(const bench::StreamRecord& record);
double client_ttft_ms(const bench::StreamRecord& record);
double decode_tok_s(const bench::StreamRecord& record);
// Throws std::runtime_error naming `what` when the server reported no engine clock (only
// nanoserve's final chunk carries one).
const bench::EngineClock& engine_clock(const bench::StreamRecord& record, const std::string& what);

}  // namespace nanoserve::lab
