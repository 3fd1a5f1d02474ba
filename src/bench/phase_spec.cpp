// spec: speculative decoding. Rows per part, each with its `case` (and `spec`: off, lookup or
// draft, the server's --spec, or draft-always: --spec draft --draft-policy always, fixed lengths):
//   step            (kind "step") one forward step of 1..spec_rows rows of one sequence after
//                   spec_prompt positions, on the main model, in-process: what a verify step of
//                   k draft tokens (k + 1 rows) costs beside a decode step (1 row);
//   continue        pycoder-f32 continuing spec_files Python files (spec_prompt tokens from the
//                   file's first definition on, spec_max_tokens greedy tokens), one stream, with
//                   spec off, lookup, draft and draft-always (pycoder-q4_k_m drafting), the four
//                   arms side by side, their order turned around from one file to the next (off:
//                   the lookup server's requests with "speculative": false, SpecArm);
//   streams         `streams` of those continuations at once on each arm, two rounds each per
//                   suite repeat (A B C D D C B A);
//   in_flight       `streams` streams kept in flight, each sending kInFlightRequests of them
//                   one after another, a round per arm and suite repeat (after the repeat's
//                   `streams` rounds, the arms' order turned around from one repeat to the next);
//   random          the main model (random weights: nothing to guess), one stream, spec off
//                   and lookup (one server) in spec_pairs ABBA pairs;
//   random_streams  `streams` streams at once on the main model, off and lookup, ABBA rounds;
//   mtp             a Qwen3.5 shape with its multi-token-prediction block (random weights: its
//                   guesses fail), one stream, spec off and mtp (one server) in spec_pairs ABBA
//                   pairs: what the block costs when its drafts fail.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bench/interrupt.h"
#include "bench/phases.h"
#include "bench/python_code.h"
#include "bench/stream_round.h"
#include "gguf/file.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace nanoserve::bench {
namespace {

constexpr int kSeedPhase = 7;
constexpr int kStepRepeatsPerRepeat = 5;  // timed steps per row count and suite repeat
// Streams kept in flight send this many continuations each, one after another: the server holds
// `streams` sequences throughout, as under sustained load, and the run ends with one stream's
// last request rather than with the slowest of a round that started together.
constexpr int kInFlightRequests = 4;

// The pycoder servers' drafters (the rows' `spec`); "off" is the lookup server's requests with
// "speculative": false (see SpecArm).
const std::vector<std::string> kSpecServerModes = {"lookup", "draft", "draft-always"};
const double kSpecServers = static_cast<double>(kSpecServerModes.size());
const double kSpecArms = kSpecServers + 1;

// The files continued: modules of the standard library, code of many styles.
const std::vector<std::string> kSourceFiles = {"argparse.py", "csv.py",     "dataclasses.py", "functools.py",
                                               "heapq.py",    "textwrap.py", "pathlib.py",     "configparser.py",
                                               "shlex.py",    "tokenize.py", "enum.py",        "fractions.py"};

std::string pycoder_file(const SuiteOptions& o, const char* type) {
  return (std::filesystem::path(o.spec_model_dir) / (std::string("pycoder-") + type + ".gguf")).string();
}

int step_units(const SuiteOptions& o) { return o.spec_rows * o.repeats * kStepRepeatsPerRepeat / 4; }
double continue_units(const SuiteOptions& o) {
  return kSpecServers * kServerStartUnits +
         kSpecArms * o.spec_files * request_units(o.spec_prompt, o.spec_max_tokens) / 8;
}
double streams_units(const SuiteOptions& o) {
  return kSpecArms * o.repeats * o.streams * (2 + kInFlightRequests) *
         request_units(o.spec_prompt, o.spec_max_tokens) / 8;
}
double random_units(const SuiteOptions& o) {
  return kServerStartUnits + 4.0 * o.spec_pairs * (1 + o.streams) * request_units(16, o.spec_max_tokens / 4);
}
// The hybrid with an MTP block the mtp part runs (synthesized once, cached).
const char* const kMtpModel = "qwen3.5-0.8b:Q4_K_M";
double mtp_synth_units(const SuiteOptions& o) {
  return o.spec_mtp_model.empty() ? synth_units(parse_model_spec(kMtpModel)) : 0;
}
double mtp_units(const SuiteOptions& o) {
  return mtp_synth_units(o) + kServerStartUnits + 4.0 * o.spec_pairs * request_units(16, o.spec_max_tokens / 4);
}
double spec_planned(const SuiteOptions& o) {
  return step_units(o) + continue_units(o) + streams_units(o) + random_units(o) + mtp_units(o);
}

// Matrix elements a row multiplies (2 flops each): every layer's projections and the output.
int64_t matrix_elements(const model::ModelConfig& c) {
  const int64_t e = c.n_embd, q = c.q_dim(), kv = c.kv_dim(), ff = c.n_ff;
  return c.n_layer * (e * (q + 2 * kv) + q * e + 3 * e * ff) + int64_t{c.n_vocab} * e;
}

// (a) A forward step of r rows of one sequence after `context` positions, for r = 1..spec_rows,
// the row counts interleaved within each repeat; the rows are dropped again after each step.
void steps(SuiteEnv& env, RowWriter& rows, const RowContext& rc, const BenchModel& bench_model) {
  const SuiteOptions& o = env.options();
  model::Model model(bench_model.path, {.threads = env.threads()});
  const int64_t context = o.spec_prompt;
  model::KvCache cache(model.config(), context + o.spec_rows, 1);
  const std::vector<int32_t> prompt = random_prompt(bench_model, static_cast<int>(context), prompt_seed({kSeedPhase, 0}));
  const std::vector<int32_t> drafts = random_prompt(bench_model, o.spec_rows, prompt_seed({kSeedPhase, 1}));
  model::Batch batch;
  model::Logits logits;
  for (int64_t p = 0; p < context; p += 512) {
    batch.clear();
    for (int64_t i = p; i < std::min(context, p + 512); ++i) batch.add(0, i, prompt[static_cast<size_t>(i)], false);
    model.forward(batch, cache, logits);
  }
  const nlohmann::ordered_json extra = {{"case", "step"},
                                        {"context_tokens", context},
                                        {"weight_bytes_per_token", bench_model.weight_bytes_per_token},
                                        {"matrix_elements", matrix_elements(model.config())}};
  const int repeats = o.repeats * kStepRepeatsPerRepeat;
  for (int rep = -1; rep < repeats && !interrupted(); ++rep) {  // -1: a warm-up round, not written
    for (int r = 1; r <= o.spec_rows; ++r) {
      batch.clear();
      for (int i = 0; i < r; ++i) batch.add(0, context + i, drafts[static_cast<size_t>(i)], true);
      const auto start = std::chrono::steady_clock::now();
      model.forward(batch, cache, logits);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      cache.truncate(0, context);
      if (rep < 0) continue;
      nlohmann::ordered_json row_extra = extra;
      row_extra["repeat"] = rep;
      rows.write(step_row(rc, row_extra, r, ms));
    }
    if (rep >= 0) env.progress().advance(static_cast<double>(step_units(o)) / repeats, "spec: step cost by rows");
  }
}

// The prompt from one Python file: spec_prompt tokens of its code (python_code.h).
std::vector<int32_t> source_prompt(const tokenizer::Tokenizer& tok, const std::string& path, int tokens) {
  std::vector<int32_t> ids = tok.encode(python_code(path), false);
  if (static_cast<int>(ids.size()) < tokens)
    throw std::runtime_error(path + " has fewer than " + std::to_string(tokens) + " tokens of code");
  ids.resize(static_cast<size_t>(tokens));
  return ids;
}

// One side of a comparison: a server, and whether its requests speculate. Speculation off is
// the lookup server's own requests with "speculative": false, not a server of its own: each
// server process holds its own copy of the weights, and identical servers decode at rates
// further apart, by where that copy landed, than speculation's own effect
// (experiments/serving-notes.md).
struct SpecArm {
  std::string spec;
  Target* target = nullptr;
  bool speculative = true;
  // `requests` as this arm sends them.
  std::vector<BenchRequest> sent(std::vector<BenchRequest> requests) const {
    for (BenchRequest& r : requests) r.speculative = speculative;
    return requests;
  }
};

// The arms of `modes` (servers started for each but "off", which is "lookup"'s with speculation
// off), in the order of `modes` with "off" first.
std::vector<SpecArm> spec_arms(const std::vector<std::string>& modes,
                               const std::vector<std::unique_ptr<Target>>& servers) {
  std::vector<SpecArm> arms;
  for (size_t k = 0; k < modes.size(); ++k) {
    if (modes[k] == "lookup") arms.insert(arms.begin(), {"off", servers[k].get(), false});
    arms.push_back({modes[k], servers[k].get(), true});
  }
  return arms;
}

std::vector<std::string> serve_args(SuiteEnv& env, const std::string& model, int64_t context, const std::string& spec,
                                    const std::string& draft_model) {
  std::vector<std::string> args = {"--model", model, "--threads", std::to_string(env.threads()), "--ctx",
                                   std::to_string(context), "--parallel", std::to_string(env.options().streams),
                                   "--max-queue", std::to_string(env.options().streams + 8), "--prefix-cache",
                                   "off"};  // every request computes its prompt
  if (spec == "draft-always")
    args.insert(args.end(), {"--spec", "draft", "--draft-model", draft_model, "--draft-policy", "always"});
  else if (spec == "draft")
    args.insert(args.end(), {"--spec", "draft", "--draft-model", draft_model});
  else
    args.insert(args.end(), {"--spec", spec});
  return args;
}

void write(RowWriter& rows, const RowContext& rc, const std::string& case_name, const std::string& spec, int repeat,
           const BenchRequest& request, const StreamRecord& record, nlohmann::ordered_json extra = {}) {
  extra["case"] = case_name;
  extra["spec"] = spec;
  extra["repeat"] = repeat;
  rows.write(request_row(rc, extra, request, record));
}

// One request on an arm, its row written.
void request_of(RowWriter& rows, const RowContext& rc, const std::string& case_name, const SpecArm& arm, int repeat,
                const BenchRequest& request, nlohmann::ordered_json extra) {
  const BenchRequest sent = arm.sent({request}).front();
  write(rows, rc, case_name, arm.spec, repeat, sent, measure_fresh(*arm.target, sent), std::move(extra));
}

// One round of `requests` at once on an arm, its rows written.
void round_of(RowWriter& rows, const RowContext& rc, const std::string& case_name, const SpecArm& arm, int round,
              const std::vector<BenchRequest>& requests) {
  const std::vector<BenchRequest> sent = arm.sent(requests);
  const std::vector<StreamResult> results = run_round(*arm.target, sent);
  for (size_t s = 0; s < results.size(); ++s)
    write(rows, rc, case_name, arm.spec, round, sent[s], results[s].record,
          {{"round", round}, {"stream", s}, {"start_offset_us", results[s].start_offset_us}});
}

// Streams kept in flight on an arm (queue s: stream s's requests, in order), their rows written
// as case "in_flight", round `round`.
void in_flight_of(RowWriter& rows, const RowContext& rc, const SpecArm& arm, int round,
                  const std::vector<std::vector<BenchRequest>>& queues) {
  std::vector<std::vector<BenchRequest>> sent;
  for (const auto& queue : queues) sent.push_back(arm.sent(queue));
  const std::vector<std::vector<StreamResult>> results = run_streams(*arm.target, sent);
  for (size_t s = 0; s < results.size(); ++s)
    for (size_t j = 0; j < results[s].size(); ++j)
      write(rows, rc, "in_flight", arm.spec, round, sent[s][j], results[s][j].record,
            {{"round", round}, {"stream", s}, {"request", j}, {"start_offset_us", results[s][j].start_offset_us}});
}

// (b) pycoder continuing Python source, one stream, `streams` at once in a round and kept in
// flight, per drafter.
void continuations(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const std::string target_path = pycoder_file(o, "f32"), draft_path = pycoder_file(o, "q4_k_m");
  const BenchModel& model = env.file_model(target_path);
  const RowContext rc = env.row_context("spec", "batch", "served", &model);
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(gguf::File::open(target_path).metadata());
  std::vector<BenchRequest> requests;
  for (int f = 0; f < o.spec_files; ++f) {
    const std::string file = kSourceFiles[static_cast<size_t>(f) % kSourceFiles.size()];
    BenchRequest r;
    r.prompt = source_prompt(tok, (std::filesystem::path(o.spec_source_dir) / file).string(), o.spec_prompt);
    r.max_tokens = o.spec_max_tokens;
    r.banned = model.silent_tokens;
    requests.push_back(std::move(r));
  }
  const int64_t context = o.spec_prompt + o.spec_max_tokens + 16;
  std::vector<std::unique_ptr<Target>> servers;
  for (const std::string& spec : kSpecServerModes) {
    servers.push_back(std::make_unique<Target>(env, serve_args(env, target_path, context, spec, draft_path)));
    measure_fresh(*servers.back(), requests.front());  // warm-up
    env.progress().advance(kServerStartUnits, "spec: pycoder servers");
  }
  const std::vector<SpecArm> arms = spec_arms(kSpecServerModes, servers);
  for (int f = 0; f < o.spec_files && !interrupted(); ++f) {
    for (size_t k = 0; k < arms.size(); ++k)
      request_of(rows, rc, "continue", arms[f % 2 == 0 ? k : arms.size() - 1 - k], f, requests[static_cast<size_t>(f)],
                 {{"file", kSourceFiles[static_cast<size_t>(f) % kSourceFiles.size()]}});
    env.progress().advance((continue_units(o) - kSpecServers * kServerStartUnits) / o.spec_files,
                           "spec: pycoder continuation");
  }
  for (int repeat = 0; repeat < o.repeats && !interrupted(); ++repeat) {
    std::vector<BenchRequest> batch;
    std::vector<std::vector<BenchRequest>> queues(static_cast<size_t>(o.streams));
    for (int s = 0; s < o.streams; ++s) {
      batch.push_back(requests[static_cast<size_t>((repeat + s) % o.spec_files)]);
      for (int j = 0; j < kInFlightRequests; ++j)
        queues[static_cast<size_t>(s)].push_back(requests[static_cast<size_t>((repeat + s + j) % o.spec_files)]);
    }
    // Two rounds at once an arm, in the order A B C D D C B A: each arm's pair lies on both sides
    // of the others' (a round is about a second; the machine drifts over a few).
    const size_t n = arms.size();
    for (size_t i = 0; i < 2 * n; ++i)
      round_of(rows, rc, "streams", arms[i < n ? i : 2 * n - 1 - i], 2 * repeat + (i < n ? 0 : 1), batch);
    for (size_t k = 0; k < n; ++k) in_flight_of(rows, rc, arms[repeat % 2 == 0 ? k : n - 1 - k], repeat, queues);
    env.progress().advance(streams_units(o) / o.repeats, "spec: pycoder, streams at once");
  }
}

// (c) The main model, where nothing repeats: speculation must cost nothing. (d) The same with a
// hybrid's MTP block (`mtp`: its cases "mtp", one stream only).
void random_weights(SuiteEnv& env, RowWriter& rows, const RowContext& rc, const BenchModel& model,
                    const std::string& spec = "lookup") {
  const SuiteOptions& o = env.options();
  const bool mtp = spec == "mtp";
  const int max_tokens = std::max(16, o.spec_max_tokens / 4);
  const int64_t context = 128 + max_tokens + 16;
  std::vector<std::unique_ptr<Target>> servers;
  servers.push_back(std::make_unique<Target>(env, serve_args(env, model.path, context, spec, "")));
  measure_fresh(*servers.back(), bench_request(model, 16, 8, prompt_seed({kSeedPhase, 2})));
  env.progress().advance(kServerStartUnits, "spec: random-weight server");
  // off (the server's requests with speculation off), then spec
  const std::vector<SpecArm> arms = {{"off", servers[0].get(), false}, {spec, servers[0].get(), true}};
  const double pair_units =
      ((mtp ? mtp_units(o) - mtp_synth_units(o) : random_units(o)) - kServerStartUnits) /
      o.spec_pairs;
  for (int pair = 0; pair < o.spec_pairs && !interrupted(); ++pair) {
    // A B B A: off, lookup, lookup, off (then the other way round in the next pair). Each arm
    // gets the same two sets of prompts: positions 0 and 3 one, 1 and 2 the other.
    const std::vector<size_t> order = pair % 2 == 0 ? std::vector<size_t>{0, 1, 1, 0} : std::vector<size_t>{1, 0, 0, 1};
    const auto seed_at = [&](size_t i, auto... more) {
      return prompt_seed({kSeedPhase, pair, static_cast<int>(std::min(i, order.size() - 1 - i)), more...});
    };
    for (size_t i = 0; i < order.size(); ++i)
      request_of(rows, rc, mtp ? "mtp" : "random", arms[order[i]], pair,
                 bench_request(model, 128, max_tokens, seed_at(i, 3)), {{"position", i}});
    for (size_t i = 0; i < order.size() && !mtp; ++i) {
      std::vector<BenchRequest> batch;
      for (int st = 0; st < o.streams; ++st) batch.push_back(bench_request(model, 128, max_tokens, seed_at(i, 4, st)));
      round_of(rows, rc, "random_streams", arms[order[i]], pair * 4 + static_cast<int>(i), batch);
    }
    env.progress().advance(pair_units, fmt::format("spec: random weights, pair {}/{}", pair + 1, o.spec_pairs));
  }
}

void run_spec(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  if (env.external()) {
    env.progress().message("  spec: skipped (with --url the suite starts no server, and the step cost is in-process)");
    env.progress().advance(spec_planned(o), "");
    return;
  }
  const BenchModel& model = env.main_model();
  const RowContext in_process = env.row_context("spec", "batch", "in-process", &model);
  run_planned_part(env, rows, in_process, {{"case", "step"}}, "spec, step cost by rows", step_units(o),
                   [&] { steps(env, rows, in_process, model); });
  if (interrupted()) return;
  const RowContext pycoder_rc = env.row_context("spec", "batch", "served", nullptr);
  run_planned_part(env, rows, pycoder_rc, {{"case", "continue"}}, "spec, pycoder continuation",
                   continue_units(o) + streams_units(o), [&] { continuations(env, rows); });
  if (interrupted()) return;
  const RowContext served = env.row_context("spec", "batch", "served", &model);
  run_planned_part(env, rows, served, {{"case", "random"}}, "spec, random weights", random_units(o),
                   [&] { random_weights(env, rows, served, model); });
  if (interrupted()) return;
  const BenchModel& hybrid = o.spec_mtp_model.empty() ? env.synth_model(parse_model_spec(kMtpModel))
                                                      : env.file_model(o.spec_mtp_model);
  const RowContext hybrid_rc = env.row_context("spec", "batch", "served", &hybrid);
  run_planned_part(env, rows, hybrid_rc, {{"case", "mtp"}}, "spec, a hybrid's MTP block",
                   mtp_units(o) - mtp_synth_units(o),
                   [&] { random_weights(env, rows, hybrid_rc, hybrid, "mtp"); });
}

}  // namespace

Phase spec_phase() {
  return {"spec",
          "speculative decoding: a step's cost by rows; pycoder continuing Python with speculation off, lookup "
          "and a draft model; streams at once; random weights, where it must cost nothing; a hybrid's MTP block",
          spec_planned, run_spec};
}

}  // namespace nanoserve::bench
