#include "bench/suite_options.h"

#include <algorithm>
#include <stdexcept>

#include "model/config.h"

namespace nanoserve::bench {
namespace {

template <typename T>
void fill(T& value, const T& full, const T& quick, bool is_quick) {
  if (value == T{}) value = is_quick ? quick : full;
}

void require_positive(int value, const char* flag) {
  if (value < 1) throw std::invalid_argument(std::string(flag) + " must be at least 1, got " + std::to_string(value));
}

}  // namespace

const std::vector<std::string>& phase_names() {
  static const std::vector<std::string> names = {"context", "raw",  "overhead", "concurrency",
                                                  "prefix",  "spec", "models"};
  return names;
}

SuiteOptions resolve_options(SuiteOptions o) {
  const bool q = o.quick;
  fill(o.repeats, 3, 3, q);
  fill(o.context_lengths, {128, 256, 512, 1024, 2048, 4096, 8192, 16384}, {128, 512, 1024}, q);
  fill(o.context_max_tokens, 64, 16, q);
  fill(o.context_kv_types, {"f16", "q8_0"}, {"f16", "q8_0"}, q);
  fill(o.raw_pairs, 16, 4, q);
  fill(o.raw_prompt, 128, 64, q);
  fill(o.raw_max_tokens, 64, 32, q);
  fill(o.overhead_mock_requests, 500, 100, q);
  fill(o.overhead_engine_requests, 30, 8, q);
  fill(o.streams, 8, 4, q);
  fill(o.concurrency_prompt, 128, 64, q);
  fill(o.concurrency_max_tokens, 64, 32, q);
  fill(o.concurrency_engines, {"sequential", "batch"}, {"sequential", "batch"}, q);
  fill(o.prefix_prompt, 1400, 700, q);
  fill(o.prefix_new_tokens, 30, 30, q);
  fill(o.prefix_restart_prompt, 4096, 1024, q);
  fill(o.prefix_shared_prompt, 1000, 500, q);
  fill(o.prefix_shared_distinct, 100, 50, q);
  fill(o.prefix_max_tokens, 16, 8, q);
  fill(o.spec_rows, 16, 8, q);
  fill(o.spec_files, 8, 3, q);
  fill(o.spec_prompt, 512, 256, q);
  fill(o.spec_max_tokens, 256, 64, q);
  fill(o.spec_pairs, 4, 2, q);
  fill(o.models,
       {"qwen2.5-0.5b:F16", "qwen2.5-0.5b:Q8_0", "qwen2.5-0.5b:Q4_K_M", "qwen3-0.6b:Q8_0", "qwen3-1.7b:Q8_0",
        "qwen3-1.7b:Q4_K_M", "gemma-3-1b:Q8_0", "phi-4-mini:Q4_K_M", "qwen3-30b-a3b:Q4_K_M", "qwen3.5-0.8b:Q4_K_M"},
       {"qwen2.5-0.5b:Q8_0", "qwen2.5-0.5b:Q4_K_M"}, q);
  fill(o.models_max_tokens, 64, 32, q);
  fill(o.models_ttft_prompt, 4096, 1024, q);

  for (const auto& phase : o.phases)
    if (std::find(phase_names().begin(), phase_names().end(), phase) == phase_names().end())
      throw std::invalid_argument("unknown phase '" + phase +
                                  "' (phases: context, raw, overhead, concurrency, prefix, spec, models)");
  if (o.threads < 0) throw std::invalid_argument("--threads must not be negative");
  require_positive(o.repeats, "--repeats");
  require_positive(o.request_timeout_s, "--request-timeout");
  require_positive(o.ready_timeout_s, "--ready-timeout");
  for (int n : o.context_lengths) require_positive(n, "--context-lengths");
  require_positive(o.context_max_tokens, "--context-max-tokens");
  for (const auto& type : o.context_kv_types) model::parse_kv_type(type);  // throws, naming the choices
  require_positive(o.raw_pairs, "--raw-pairs");
  require_positive(o.raw_prompt, "--raw-prompt");
  require_positive(o.raw_max_tokens, "--raw-max-tokens");
  require_positive(o.overhead_mock_requests, "--overhead-mock-requests");
  require_positive(o.overhead_engine_requests, "--overhead-engine-requests");
  require_positive(o.streams, "--streams");
  require_positive(o.concurrency_prompt, "--concurrency-prompt");
  require_positive(o.concurrency_max_tokens, "--concurrency-max-tokens");
  require_positive(o.prefix_prompt, "--prefix-prompt");
  require_positive(o.prefix_new_tokens, "--prefix-new-tokens");
  require_positive(o.prefix_restart_prompt, "--prefix-restart-prompt");
  require_positive(o.prefix_shared_prompt, "--prefix-shared-prompt");
  require_positive(o.prefix_shared_distinct, "--prefix-shared-distinct");
  require_positive(o.prefix_max_tokens, "--prefix-max-tokens");
  require_positive(o.spec_rows, "--spec-rows");
  require_positive(o.spec_files, "--spec-files");
  require_positive(o.spec_prompt, "--spec-prompt");
  require_positive(o.spec_max_tokens, "--spec-max-tokens");
  require_positive(o.spec_pairs, "--spec-pairs");
  if (o.spec_rows > 64) throw std::invalid_argument("--spec-rows must be at most 64");
  require_positive(o.models_max_tokens, "--models-max-tokens");
  require_positive(o.models_ttft_prompt, "--models-ttft-prompt");
  if (o.streams > 256) throw std::invalid_argument("--streams must be at most 256");
  parse_model_spec(o.main_model);
  for (const auto& m : o.models) parse_model_spec(m);
  std::sort(o.context_lengths.begin(), o.context_lengths.end());
  o.context_lengths.erase(std::unique(o.context_lengths.begin(), o.context_lengths.end()), o.context_lengths.end());
  return o;
}

}  // namespace nanoserve::bench
