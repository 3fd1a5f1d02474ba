// models: synthesized presets × weight types (random weights, cached), each behind its own
// server: decode rate on a short prompt and TTFT on a long one, peak memory, and the
// figures the charts turn into achieved GB/s of weights (decode tok/s × bytes a decode step
// reads) and its fraction of this machine's read bandwidth, measured around each model's
// decode requests: on a shared machine other tenants' traffic moves it within seconds, so one
// measurement at the start made some models read more than 100% of it.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "bench/interrupt.h"
#include "bench/phases.h"
#include "machine/bandwidth.h"

namespace nanoserve::bench {
namespace {

constexpr int kDecodePrompt = 128, kTtftTokens = 2, kWarmupTokens = 4;
constexpr double kBandwidthUnits = 5;

double model_units(const SuiteOptions& o) {
  return kServerStartUnits + 2 * kBandwidthUnits + request_units(kDecodePrompt, kWarmupTokens) +
         o.repeats * (request_units(kDecodePrompt, o.models_max_tokens) + request_units(o.models_ttft_prompt, kTtftTokens));
}

double models_planned(const SuiteOptions& o) {
  double units = 0;
  for (const std::string& spec : o.models) units += model_units(o) + synth_units(parse_model_spec(spec));
  return units;
}

// The best of read_bandwidth's passes on the suite's thread count, while the model's server idles.
double measure_bandwidth(SuiteEnv& env, const std::string& label) {
  env.progress().note(label + ": measuring the memory read bandwidth");
  const double bandwidth = machine::read_bandwidth(env.threads());
  env.progress().advance(kBandwidthUnits, label);
  return bandwidth;
}

void run_model(SuiteEnv& env, RowWriter& rows, const ModelSpec& spec, RowContext& rc, nlohmann::ordered_json& point) {
  const SuiteOptions& o = env.options();
  const std::string label = "models, " + spec.label();
  env.progress().note(label);
  const BenchModel& model = env.synth_model(spec);
  rc.model = &model;
  point["model_file_bytes"] = model.file_bytes;
  point["weight_bytes_per_token"] = model.weight_bytes_per_token;
  point["kv_bytes_per_position"] = model.kv_bytes_per_position;
  const int context_size = std::max(o.models_ttft_prompt + kTtftTokens, kDecodePrompt + o.models_max_tokens);
  env.progress().note(label + ": starting the server");
  Target target(env, {"--model", model.path, "--engine", "sequential", "--threads", std::to_string(env.threads()),
                      "--ctx", std::to_string(context_size)});
  env.progress().advance(kServerStartUnits, label + ": warm-up");
  StreamClient client = target.client();
  measure_served(target, client, bench_request(model, kDecodePrompt, kWarmupTokens, prompt_seed({5, -1})));
  env.progress().advance(request_units(kDecodePrompt, kWarmupTokens), label);
  struct Measured {
    const char* what;
    int repeat;
    BenchRequest request;
    StreamRecord record;
  };
  auto measure = [&](const char* what, int prompt, int max_tokens, int repeat) {
    Measured m{what, repeat, bench_request(model, prompt, max_tokens, prompt_seed({5, prompt, repeat})), {}};
    m.record = measure_served(target, client, m.request);
    env.progress().advance(request_units(prompt, max_tokens), fmt::format("{}: {} {}/{}", label, what, repeat + 1, o.repeats));
    return m;
  };
  auto write = [&](const Measured& m) {
    nlohmann::ordered_json extra = point;
    extra["measure"] = m.what;
    extra["repeat"] = m.repeat;
    rows.write(request_row(rc, extra, m.request, m.record));
  };
  // The decode requests between two bandwidth measurements; every row carries the better one.
  const double before = measure_bandwidth(env, label);
  std::vector<Measured> decode;
  for (int r = 0; r < o.repeats && !interrupted(); ++r)
    decode.push_back(measure("decode", kDecodePrompt, o.models_max_tokens, r));
  point["read_bandwidth_bytes_s"] = std::max(before, measure_bandwidth(env, label));
  for (const Measured& m : decode) write(m);
  for (int r = 0; r < o.repeats && !interrupted(); ++r) write(measure("ttft", o.models_ttft_prompt, kTtftTokens, r));
}

void run_models(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  if (env.external()) {
    const RowContext rc = env.row_context("models", "external", "served", nullptr);
    rows.write(error_row(rc, {}, "the models phase starts a server per model; it cannot run against --url"));
    env.progress().message("  models: skipped (it starts a server per model; not with --url)");
    env.progress().advance(models_planned(o), "");
    return;
  }
  for (const std::string& text : o.models) {
    if (interrupted()) return;
    const ModelSpec spec = parse_model_spec(text);
    RowContext rc = env.row_context("models", "sequential", "served", nullptr);
    nlohmann::ordered_json point = {{"model_spec", spec.label()}};
    run_planned_part(env, rows, rc, point, "models, " + spec.label(), model_units(o) + synth_units(spec),
                     [&] { run_model(env, rows, spec, rc, point); });
  }
}

}  // namespace

Phase models_phase() {
  return {"models", "synth presets × weight types: decode tok/s, TTFT, peak memory, achieved GB/s of weights",
          models_planned, run_models};
}

}  // namespace nanoserve::bench
