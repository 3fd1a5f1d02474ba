// prefix: what the prefix cache saves. Rows per repeat, each with its `case`:
//   cold      a conversation of prefix_prompt tokens nobody sent before;
//   followup  the same conversation and prefix_new_tokens more (the next user message);
//   resend    that follow-up again, exactly;
//   restart_cold / restart_warm  a prefix_restart_prompt-token prompt to a server with
//             --cache-dir, then again to a new server on the same folder (not with --url);
//   shared    `streams` streams at once that share a prefix_shared_prompt-token system prompt,
//             each with prefix_shared_distinct tokens of its own, with the prefix cache on
//             (`cache` on) and off (not with --url).
// The prompts are token ids (as every phase sends them), so the same bytes reach any server.
#include <fmt/format.h>

#include <filesystem>

#include "bench/interrupt.h"
#include "bench/phases.h"
#include "bench/stream_round.h"

namespace nanoserve::bench {
namespace {

constexpr int kSeedPhase = 6;

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double conversation_units(const SuiteOptions& o) {
  return o.repeats * (request_units(o.prefix_prompt, o.prefix_max_tokens) +
                      2 * request_units(o.prefix_new_tokens, o.prefix_max_tokens));
}
double restart_units(const SuiteOptions& o) {
  return 2 * kServerStartUnits + o.repeats * (request_units(o.prefix_restart_prompt, o.prefix_max_tokens) +
                                              request_units(1, o.prefix_max_tokens));
}
double shared_units(const SuiteOptions& o) {
  return kServerStartUnits +
         o.repeats * o.streams * request_units(o.prefix_shared_prompt + o.prefix_shared_distinct, o.prefix_max_tokens);
}
double prefix_planned(const SuiteOptions& o) {
  const bool own = o.url.empty();
  return (own ? kServerStartUnits : 0) + conversation_units(o) + (own ? restart_units(o) : 0) +
         shared_units(o) * (own ? 2 : 1);
}

// The server args every part starts with; `extra` after them.
std::vector<std::string> serve_args(SuiteEnv& env, const BenchModel& model, int64_t context,
                                    const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--model", model.path, "--threads", std::to_string(env.threads()), "--ctx",
                                   std::to_string(context), "--parallel", std::to_string(env.options().streams),
                                   "--max-queue", std::to_string(env.options().streams + 8)};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void write(RowWriter& rows, const RowContext& rc, const std::string& case_name, int repeat,
           const BenchRequest& request, const StreamRecord& record, nlohmann::ordered_json extra = {}) {
  extra["case"] = case_name;
  extra["repeat"] = repeat;
  rows.write(request_row(rc, extra, request, record));
}

void conversation(SuiteEnv& env, RowWriter& rows, const RowContext& rc, const BenchModel& model) {
  const SuiteOptions& o = env.options();
  Target target(env, serve_args(env, model, o.prefix_prompt + o.prefix_new_tokens + o.prefix_max_tokens, {}));
  measure_fresh(target, bench_request(model, 16, o.prefix_max_tokens, prompt_seed({kSeedPhase, -1})));
  env.progress().advance(kServerStartUnits, "prefix: conversation");
  for (int r = 0; r < o.repeats && !interrupted(); ++r) {
    const BenchRequest cold = bench_request(model, o.prefix_prompt, o.prefix_max_tokens, prompt_seed({kSeedPhase, 0, r}));
    BenchRequest followup = cold;
    followup.prompt = concat(cold.prompt, random_prompt(model, o.prefix_new_tokens, prompt_seed({kSeedPhase, 1, r})));
    write(rows, rc, "cold", r, cold, measure_fresh(target, cold));
    write(rows, rc, "followup", r, followup, measure_fresh(target, followup));
    write(rows, rc, "resend", r, followup, measure_fresh(target, followup));
    env.progress().advance(conversation_units(o) / o.repeats, fmt::format("prefix: conversation {}/{}", r + 1, o.repeats));
  }
}

// A prompt to a server with a disk tier, then the same prompt to a new server on that folder.
void restart(SuiteEnv& env, RowWriter& rows, const RowContext& rc, const BenchModel& model) {
  const SuiteOptions& o = env.options();
  const std::string dir = (std::filesystem::path(o.out_dir) / "prefix-cache-dir").string();
  std::filesystem::remove_all(dir);
  const std::vector<std::string> args = serve_args(env, model, o.prefix_restart_prompt + o.prefix_max_tokens,
                                                   {"--cache-dir", dir, "--cache-disk", "8G"});
  std::vector<BenchRequest> requests;
  for (int r = 0; r < o.repeats; ++r)
    requests.push_back(bench_request(model, o.prefix_restart_prompt, o.prefix_max_tokens, prompt_seed({kSeedPhase, 2, r})));
  for (const char* case_name : {"restart_cold", "restart_warm"}) {
    Target target(env, args);  // stopped (SIGTERM: its disk writes finish) at the end of the scope
    env.progress().advance(kServerStartUnits, std::string("prefix: ") + case_name);
    for (int r = 0; r < o.repeats && !interrupted(); ++r)
      write(rows, rc, case_name, r, requests[static_cast<size_t>(r)], measure_fresh(target, requests[static_cast<size_t>(r)]));
  }
  std::filesystem::remove_all(dir);
}

// `streams` requests at once sharing a system prompt, per repeat.
void shared(SuiteEnv& env, RowWriter& rows, const RowContext& rc, const BenchModel& model, const std::string& cache) {
  const SuiteOptions& o = env.options();
  std::vector<std::string> extra;
  if (cache == "off") extra = {"--prefix-cache", "off"};
  Target target(env, serve_args(env, model, o.prefix_shared_prompt + o.prefix_shared_distinct + o.prefix_max_tokens, extra));
  measure_fresh(target, bench_request(model, 16, o.prefix_max_tokens, prompt_seed({kSeedPhase, -2})));
  env.progress().advance(kServerStartUnits, "prefix: shared system prompt, cache " + cache);
  for (int r = 0; r < o.repeats && !interrupted(); ++r) {
    const std::vector<int32_t> system = random_prompt(model, o.prefix_shared_prompt, prompt_seed({kSeedPhase, 3, r}));
    std::vector<BenchRequest> requests;
    for (int s = 0; s < o.streams; ++s) {
      BenchRequest request = bench_request(model, o.prefix_shared_distinct, o.prefix_max_tokens,
                                           prompt_seed({kSeedPhase, 4, r, s}));
      request.prompt = concat(system, request.prompt);
      requests.push_back(std::move(request));
    }
    const std::vector<StreamResult> results = run_round(target, requests);
    for (int s = 0; s < o.streams; ++s)
      write(rows, rc, "shared", r, requests[static_cast<size_t>(s)], results[static_cast<size_t>(s)].record,
            {{"cache", cache}, {"stream", s}, {"start_offset_us", results[static_cast<size_t>(s)].start_offset_us}});
    env.progress().advance(shared_units(o) / o.repeats, fmt::format("prefix: shared, cache {}", cache));
  }
}

void run_prefix(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  const RowContext rc = env.row_context("prefix", env.external() ? "external" : "batch", "served", &model);
  run_planned_part(env, rows, rc, {{"case", "cold"}}, "prefix, conversation",
                   (env.external() ? 0 : kServerStartUnits) + conversation_units(o),
                   [&] { conversation(env, rows, rc, model); });
  if (interrupted()) return;
  if (env.external()) {
    env.progress().message("  prefix, restart: skipped (with --url the suite starts no server)");
  } else {
    run_planned_part(env, rows, rc, {{"case", "restart_cold"}}, "prefix, restart", restart_units(o),
                     [&] { restart(env, rows, rc, model); });
  }
  for (const std::string& cache : env.external() ? std::vector<std::string>{"on"} : std::vector<std::string>{"on", "off"}) {
    if (interrupted()) return;
    run_planned_part(env, rows, rc, {{"case", "shared"}, {"cache", cache}}, "prefix, shared system prompt",
                     shared_units(o), [&] { shared(env, rows, rc, model, cache); });
  }
}

}  // namespace

Phase prefix_phase() {
  return {"prefix",
          "the prefix cache: a conversation cold, its follow-up and an exact resend; a prompt after a restart "
          "(--cache-dir); streams sharing a system prompt, cache on and off",
          prefix_planned, run_prefix};
}

}  // namespace nanoserve::bench
