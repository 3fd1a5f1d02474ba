#include "bench/suite_env.h"

#include <fmt/format.h>

#include <thread>

#include "bench/interrupt.h"
#include "machine/host.h"

namespace nanoserve::bench {

SuiteEnv::SuiteEnv(SuiteOptions options, HostInfo host, std::string run_id, Progress& progress)
    : options_(std::move(options)),
      host_(std::move(host)),
      run_id_(std::move(run_id)),
      progress_(progress),
      threads_(options_.threads > 0 ? options_.threads : machine::physical_cores()) {}

const BenchModel& SuiteEnv::inspected(const std::string& path, const std::string& preset) {
  auto& slot = models_[path];
  if (!slot) {
    slot = std::make_unique<BenchModel>(inspect_model(path));
    slot->preset = preset;
  }
  return *slot;
}

const BenchModel& SuiteEnv::main_model() {
  if (!options_.model_path.empty()) return inspected(options_.model_path, "");
  if (external())
    throw std::invalid_argument("with --url, give --model: the GGUF file the server serves (for prompt token ids and "
                                "the tokens that stream no text)");
  return synth_model(parse_model_spec(options_.main_model));
}

const BenchModel& SuiteEnv::synth_model(const ModelSpec& spec) {
  const double units = synth_units(spec);
  const std::string path = cached_synth_model(spec, options_.tokenizers_dir, [&](const std::string& file) {
    progress_.message(fmt::format("  synthesizing {} (random weights) into {}: a minute or a few, once", spec.label(), file));
  });
  if (units > 0) progress_.advance(units, "synthesized " + spec.label());
  return inspected(path, spec.preset);
}

RowContext SuiteEnv::row_context(const std::string& phase, const std::string& engine, const std::string& target,
                                 const BenchModel* model) const {
  return {.host = &host_, .run_id = run_id_, .phase = phase, .engine = external() ? "external" : engine,
          .target = target, .model = model, .threads = external() ? 0 : threads_};
}

Target::Target(SuiteEnv& env, const std::vector<std::string>& serve_args)
    : timeouts_{.connect_s = 10, .read_s = env.options().request_timeout_s} {
  if (env.external()) {
    endpoint_ = parse_endpoint(env.options().url);
    endpoint_.api_key = env.options().api_key;
  } else {
    child_ = std::make_unique<ChildServer>(serve_args, std::chrono::seconds(env.options().ready_timeout_s));
    endpoint_ = child_->endpoint();
  }
  StreamClient probe(endpoint_, {.connect_s = 10, .read_s = 30});
  std::string body;
  const int status = probe.get("/v1/models", &body);
  if (status == 0) {
    check_alive();
    throw RequestFailed("no answer from " + endpoint_.origin() + endpoint_.prefix + "/v1/models");
  }
  // A server without /v1/models is still measured; requests then carry no "model".
  const nlohmann::json models = nlohmann::json::parse(body, nullptr, false);
  if (status == 200 && models.is_object() && models.contains("data") && models["data"].is_array() &&
      !models["data"].empty() && models["data"][0].contains("id") && models["data"][0]["id"].is_string())
    model_name_ = models["data"][0]["id"];
}

void Target::check_alive() {
  const std::lock_guard lock(child_mutex_);
  if (!child_) return;
  // A killed server closes its sockets a moment before it can be reaped: give it a second.
  for (int i = 0; i < 50 && child_->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!child_->running()) throw RequestFailed("the server died; its log ends with:\n" + child_->log_tail());
}

StreamRecord measure_served(Target& target, StreamClient& client, const BenchRequest& request) {
  StreamRecord record = client.stream("/v1/completions", completion_body(request, target.model_name()), &interrupt_flag());
  if (!record.ok()) {
    if (interrupted()) throw RequestFailed("interrupted");
    target.check_alive();
    throw RequestFailed(record.error);
  }
  return record;
}

StreamRecord measure_fresh(Target& target, const BenchRequest& request) {
  StreamClient client = target.client();
  client.get("/health");
  return measure_served(target, client, request);
}

double request_units(int prompt_tokens, int max_tokens) { return prompt_tokens / 8.0 + max_tokens + 2; }

bool run_part(SuiteEnv& env, RowWriter& rows, const RowContext& context, const nlohmann::ordered_json& extra,
              const std::string& label, const std::function<void()>& body) {
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    if (interrupted()) return false;
    rows.write(error_row(context, extra, e.what()));
    env.progress().message(fmt::format("  {}: FAILED: {}", label, e.what()));
    return false;
  }
}

uint64_t prompt_seed(std::initializer_list<int64_t> parts) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the parts
  for (const int64_t p : parts) {
    h ^= static_cast<uint64_t>(p);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace nanoserve::bench
