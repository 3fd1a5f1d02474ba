// context: one server per prompt length, its context just large enough (so its KV cache is
// what the formula says for that length), a short warm-up, then `repeats` requests of that
// prompt length. Rows: client and engine TTFT, prefill and decode rates, peak memory beside
// the KV-cache formula.
#include <fmt/format.h>

#include <algorithm>

#include "bench/interrupt.h"
#include "bench/phases.h"

namespace nanoserve::bench {
namespace {

constexpr int kWarmupPrompt = 256, kWarmupTokens = 4;

double point_units(const SuiteOptions& o, int length) {
  return kServerStartUnits + request_units(std::min(length, kWarmupPrompt), kWarmupTokens) +
         o.repeats * request_units(length, o.context_max_tokens);
}

double planned(const SuiteOptions& o) {
  double units = 0;
  for (int length : o.context_lengths) units += point_units(o, length);
  return units;
}

void run(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  for (int length : o.context_lengths) {
    if (interrupted()) return;
    const int64_t context_size = length + o.context_max_tokens;
    const nlohmann::ordered_json point = {{"context_size", context_size},
                                          {"kv_cache_bytes", model.kv_bytes_for(context_size)},
                                          {"model_file_bytes", model.file_bytes}};
    const RowContext rc = env.row_context("context", "sequential", "served", &model);
    if (context_size > model.n_ctx_train) {
      env.progress().message(fmt::format("  context {}: skipped, beyond the model's context of {} tokens", length,
                                         model.n_ctx_train));
      env.progress().advance(point_units(o, length), "");
      continue;
    }
    const std::string label = fmt::format("context {} tokens", length);
    run_planned_part(env, rows, rc, point, label, point_units(o, length), [&] {
      env.progress().note(label + ": starting the server");
      Target target(env, {"--model", model.path, "--engine", "sequential", "--threads", std::to_string(env.threads()),
                          "--ctx", std::to_string(context_size)});
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
}

}  // namespace

Phase context_phase() {
  return {"context", "prompt lengths: TTFT, prefill and decode rates, peak memory vs the KV-cache formula", planned,
          run};
}

}  // namespace nanoserve::bench
