// context: one server per prompt length and KV cache type (f16, q8_0), its context just large
// enough (so its KV cache is what the formula says for that length), a short warm-up, then
// `repeats` requests of that prompt length. Rows: client and engine TTFT, prefill and decode
// rates, peak memory beside the KV-cache formula of the row's type.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/interrupt.h"
#include "bench/phases.h"
#include "model/config.h"

namespace nanoserve::bench {
namespace {

constexpr int kWarmupPrompt = 256, kWarmupTokens = 4;

// The KV cache types this model runs with, of those asked for.
std::vector<std::string> kv_types_for(const SuiteOptions& o, const BenchModel& model) {
  std::vector<std::string> types;
  for (const std::string& type : o.context_kv_types)
    if (model.has_kv_type(model::parse_kv_type(type))) types.push_back(type);
  return types;
}

double point_units(const SuiteOptions& o, int length) {
  return kServerStartUnits + request_units(std::min(length, kWarmupPrompt), kWarmupTokens) +
         o.repeats * request_units(length, o.context_max_tokens);
}

double context_planned(const SuiteOptions& o) {
  double units = 0;
  for (int length : o.context_lengths) units += point_units(o, length) * static_cast<double>(o.context_kv_types.size());
  return units;
}

// One length with one type of cache: a server of its own, a warm-up, `repeats` requests.
void run_point(SuiteEnv& env, RowWriter& rows, int length, const std::string& kv_type) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  const int64_t context_size = length + o.context_max_tokens;
  const nlohmann::ordered_json point = {{"context_size", context_size},
                                        {"kv_type", kv_type},
                                        {"kv_cache_bytes", model.kv_bytes_for(context_size, model::parse_kv_type(kv_type))},
                                        {"model_file_bytes", model.file_bytes}};
  const RowContext rc = env.row_context("context", "sequential", "served", &model);
  const std::string label = fmt::format("context {} tokens, {} KV cache", length, kv_type);
  run_planned_part(env, rows, rc, point, label, point_units(o, length), [&] {
    env.progress().note(label + ": starting the server");
    Target target(env, {"--model", model.path, "--engine", "sequential", "--threads", std::to_string(env.threads()),
                        "--ctx", std::to_string(context_size), "--kv-type", kv_type});
    env.progress().advance(kServerStartUnits, label + ": warm-up");
    StreamClient client = target.client();
    const int warm_prompt = std::min(length, kWarmupPrompt);
    measure_served(target, client, bench_request(model, warm_prompt, kWarmupTokens, prompt_seed({0, length})));
    env.progress().advance(request_units(warm_prompt, kWarmupTokens), label);
    for (int r = 0; r < o.repeats && !interrupted(); ++r) {
      const BenchRequest request = bench_request(model, length, o.context_max_tokens, prompt_seed({1, length, r}));
      const StreamRecord record = measure_served(target, client, request);
      nlohmann::ordered_json extra = point;
      extra["repeat"] = r;
      rows.write(request_row(rc, extra, request, record));
      env.progress().advance(request_units(length, o.context_max_tokens), label);
    }
  });
}

// Each length with each type of cache, the same prompts; the types' order alternates from one
// length to the next (A B, B A, ...), so that a drift of the machine's speed falls on both.
void run_context(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  std::vector<std::string> types = kv_types_for(o, model);
  for (const std::string& type : o.context_kv_types)
    if (std::find(types.begin(), types.end(), type) == types.end()) {
      env.progress().message(fmt::format("  {} KV cache: skipped, this model's head size is not a multiple of 32", type));
      for (int length : o.context_lengths) env.progress().advance(point_units(o, length), "");
    }
  for (int length : o.context_lengths) {
    if (interrupted()) return;
    if (length + o.context_max_tokens > model.n_ctx_train) {
      env.progress().message(fmt::format("  context {}: skipped, beyond the model's context of {} tokens", length,
                                         model.n_ctx_train));
      for (size_t t = 0; t < types.size(); ++t) env.progress().advance(point_units(o, length), "");
      continue;
    }
    for (const std::string& type : types) run_point(env, rows, length, type);
    std::reverse(types.begin(), types.end());
  }
}

}  // namespace

Phase context_phase() {
  return {"context", "prompt lengths: TTFT, prefill and decode rates, peak memory vs the KV-cache formula",
          context_planned, run_context};
}

}  // namespace nanoserve::bench
