// raw: the same engine in this process and behind the HTTP server, on the same requests,
// interleaved in ABBA order (pair k runs served then in-process for even k, the other way
// for odd k), so a drift of the machine's speed over time cancels out of the differences.
// Three arms: the sequential engine, one request at a time; the batch engine (what `serve`
// runs by default), one request at a time and `streams` requests released together (a round
// on each side of a pair). Rows carry the pair, the in-process side's engine and the arm's
// stream count; the report takes per-pair differences per arm.
#include <fmt/format.h>

#include <algorithm>

#include "bench/in_process_client.h"
#include "bench/interrupt.h"
#include "bench/phases.h"
#include "bench/stream_round.h"
#include "engine/engine_factory.h"

namespace nanoserve::bench {
namespace {

constexpr double kEngineLoadUnits = 10;
constexpr int64_t kRawSeedPhase = 2;

struct RawArm {
  std::string engine;  // the kind both sides run
  int streams = 1;     // requests released together on each side of a pair
};

// With --url the served side is another server whose engine the suite does not know: only
// the sequential arm runs then, as it always has, so no row claims a batch engine it lacks.
std::vector<std::string> raw_engines(const SuiteOptions& o) {
  return o.url.empty() ? std::vector<std::string>{"sequential", "batch"} : std::vector<std::string>{"sequential"};
}

std::vector<RawArm> planned_arms(const std::string& engine, const SuiteOptions& o) {
  if (engine == "sequential" || o.streams == 1) return {{engine, 1}};
  return {{engine, 1}, {engine, o.streams}};
}

double raw_arm_units(const RawArm& arm, const SuiteOptions& o) {
  return 2.0 * (1 + o.raw_pairs) * arm.streams * request_units(o.raw_prompt, o.raw_max_tokens);
}

double raw_engine_units(const std::string& engine, const SuiteOptions& o) {
  double units = kServerStartUnits + kEngineLoadUnits;
  for (const RawArm& arm : planned_arms(engine, o)) units += raw_arm_units(arm, o);
  return units;
}

double raw_planned(const SuiteOptions& o) {
  double units = 0;
  for (const std::string& engine : raw_engines(o)) units += raw_engine_units(engine, o);
  return units;
}

// What both sides of one engine's pairs share: the two targets and the rows' contexts.
struct RawSides {
  SuiteEnv& env;
  Target& target;
  StreamClient& client;  // the one-stream arm's kept-alive connection
  engine::Engine& engine;
  RowContext served_rc, in_process_rc;
};

void check_record(const StreamRecord& record) {
  if (!record.ok()) throw RequestFailed(record.error);
}

// One side of a pair: a single request as the phase always timed it (one kept-alive
// connection, or run_in_process on this thread), or a round of streams released together.
std::vector<StreamResult> raw_side(RawSides& sides, bool served, const std::vector<BenchRequest>& requests,
                                   const std::string& id) {
  if (requests.size() == 1) {
    StreamResult one;
    one.record = served ? measure_served(sides.target, sides.client, requests.front())
                        : run_in_process(sides.engine, requests.front(), id, sides.env.request_timeout(),
                                         &interrupt_flag());
    check_record(one.record);
    return {one};
  }
  if (served) return run_round(sides.target, requests);
  std::vector<StreamResult> results =
      run_in_process_round(sides.engine, requests, id, sides.env.request_timeout(), &interrupt_flag());
  for (const StreamResult& r : results) check_record(r.record);
  return results;
}

std::vector<BenchRequest> raw_requests(const BenchModel& model, const SuiteOptions& o, const RawArm& arm, int pair) {
  std::vector<BenchRequest> requests;
  for (int s = 0; s < arm.streams; ++s) {
    // The sequential arm keeps the prompts it always had; the batch arms have their own.
    const uint64_t seed = arm.engine == "sequential" ? prompt_seed({kRawSeedPhase, pair})
                                                     : prompt_seed({kRawSeedPhase, pair, arm.streams, s});
    requests.push_back(bench_request(model, o.raw_prompt, o.raw_max_tokens, seed));
  }
  return requests;
}

void run_raw_arm(RawSides& sides, RowWriter& rows, const BenchModel& model, const RawArm& arm) {
  const SuiteOptions& o = sides.env.options();
  const std::string label = fmt::format("raw: {} engine, {} stream{}", arm.engine, arm.streams, arm.streams == 1 ? "" : "s");
  const double units = arm.streams * request_units(o.raw_prompt, o.raw_max_tokens);
  // A warm-up round on each side first: a round of streams touches KV blocks and buffers
  // that one request does not, and neither side should pay for that inside a pair.
  const std::vector<BenchRequest> warm = raw_requests(model, o, arm, -1);
  raw_side(sides, true, warm, "raw-warmup");
  raw_side(sides, false, warm, fmt::format("raw-{}-{}-warmup", arm.engine, arm.streams));
  sides.env.progress().advance(2 * units, label + ": warm-up");
  for (int pair = 0; pair < o.raw_pairs && !interrupted(); ++pair) {
    const std::vector<BenchRequest> requests = raw_requests(model, o, arm, pair);
    const bool served_first = pair % 2 == 0;
    for (int position = 0; position < 2; ++position) {
      const bool served = (position == 0) == served_first;
      const std::vector<StreamResult> results =
          raw_side(sides, served, requests, fmt::format("raw-{}-{}-{}", arm.engine, arm.streams, pair));
      for (int s = 0; s < arm.streams; ++s) {
        const nlohmann::ordered_json extra = {{"pair", pair},
                                              {"order", served_first ? "served first" : "in-process first"},
                                              {"position", position},
                                              {"in_process_engine", arm.engine},
                                              {"streams", arm.streams},
                                              {"stream", s},
                                              {"start_offset_us", results[s].start_offset_us}};
        rows.write(request_row(served ? sides.served_rc : sides.in_process_rc, extra, requests[s], results[s].record));
      }
      sides.env.progress().advance(units, fmt::format("{}: pair {}/{}", label, pair + 1, o.raw_pairs));
    }
  }
}

void run_raw_engine(SuiteEnv& env, RowWriter& rows, const std::string& engine_kind) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  const RowContext served_rc = env.row_context("raw", engine_kind, "served", &model);
  RowContext in_process_rc = served_rc;
  in_process_rc.engine = engine_kind;
  in_process_rc.target = "in-process";
  in_process_rc.threads = env.threads();
  const int64_t context_size = o.raw_prompt + o.raw_max_tokens;
  // Both sides get the same options, and everything else is the kind's default on both: the
  // batch engine as `serve` runs it (prefix cache, lookup drafting), with room for the streams.
  const int parallel = engine_kind == "sequential" ? 1 : std::max(o.streams, engine::default_parallel(engine_kind));
  const std::string label = fmt::format("raw, {} engine", engine_kind);
  run_planned_part(env, rows, served_rc, {{"in_process_engine", engine_kind}}, label, raw_engine_units(engine_kind, o), [&] {
    env.progress().note(label + ": starting the server");
    Target target(env, {"--model", model.path, "--engine", engine_kind, "--threads", std::to_string(env.threads()),
                        "--ctx", std::to_string(context_size), "--parallel", std::to_string(parallel)});
    env.progress().advance(kServerStartUnits, label + ": loading the engine in-process");
    const std::unique_ptr<engine::Engine> engine =
        engine::make_engine({.kind = engine_kind, .model_path = model.path, .threads = env.threads(),
                             .context_size = context_size, .parallel = parallel});
    env.progress().advance(kEngineLoadUnits, label);
    StreamClient client = target.client();
    RawSides sides{env, target, client, *engine, served_rc, in_process_rc};
    for (const RawArm& arm : planned_arms(engine_kind, o)) {
      if (interrupted()) return;
      run_raw_arm(sides, rows, model, arm);
    }
  });
}

void run_raw(SuiteEnv& env, RowWriter& rows) {
  for (const std::string& engine : raw_engines(env.options())) {
    if (interrupted()) return;
    run_raw_engine(env, rows, engine);
  }
}

}  // namespace

Phase raw_phase() {
  return {"raw",
          "in-process engine vs served, ABBA pairs: the sequential engine, the batch engine one stream and N at "
          "once; decode and TTFT differences",
          raw_planned, run_raw};
}

}  // namespace nanoserve::bench
