// raw: the same engine in this process and behind the HTTP server, on the same requests,
// interleaved in ABBA order (pair k runs served then in-process for even k, the other way
// for odd k), so a drift of the machine's speed over time cancels out of the differences.
// Rows carry the pair and the arm; the charts take per-pair differences.
#include <fmt/format.h>

#include "bench/in_process_client.h"
#include "bench/interrupt.h"
#include "bench/phases.h"
#include "engine/engine_factory.h"

namespace nanoserve::bench {
namespace {

constexpr double kEngineLoadUnits = 10;

double raw_planned(const SuiteOptions& o) {
  return kServerStartUnits + kEngineLoadUnits + 2 * (1 + o.raw_pairs) * request_units(o.raw_prompt, o.raw_max_tokens);
}

StreamRecord in_process(SuiteEnv& env, engine::Engine& engine, const BenchRequest& request, const std::string& id) {
  StreamRecord record = run_in_process(engine, request, id, env.request_timeout(), &interrupt_flag());
  if (!record.ok()) throw RequestFailed(record.error);
  return record;
}

void run_raw(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  const RowContext served_rc = env.row_context("raw", "sequential", "served", &model);
  RowContext in_process_rc = served_rc;
  in_process_rc.engine = "sequential";
  in_process_rc.target = "in-process";
  in_process_rc.threads = env.threads();
  const int64_t context_size = o.raw_prompt + o.raw_max_tokens;
  run_planned_part(env, rows, served_rc, {}, "raw", raw_planned(o), [&] {
    env.progress().note("raw: starting the server");
    Target target(env, {"--model", model.path, "--engine", "sequential", "--threads", std::to_string(env.threads()),
                        "--ctx", std::to_string(context_size)});
    env.progress().advance(kServerStartUnits, "raw: loading the engine in-process");
    const std::unique_ptr<engine::Engine> engine = engine::make_engine(
        {.kind = "sequential", .model_path = model.path, .threads = env.threads(), .context_size = context_size});
    env.progress().advance(kEngineLoadUnits, "raw: warm-up");
    StreamClient client = target.client();
    const double units = request_units(o.raw_prompt, o.raw_max_tokens);
    const BenchRequest warm = bench_request(model, o.raw_prompt, o.raw_max_tokens, prompt_seed({2, -1}));
    measure_served(target, client, warm);
    in_process(env, *engine, warm, "raw-warmup");
    env.progress().advance(2 * units, "raw");
    for (int pair = 0; pair < o.raw_pairs && !interrupted(); ++pair) {
      const BenchRequest request = bench_request(model, o.raw_prompt, o.raw_max_tokens, prompt_seed({2, pair}));
      const bool served_first = pair % 2 == 0;
      for (int position = 0; position < 2; ++position) {
        const bool served = (position == 0) == served_first;
        const StreamRecord record = served ? measure_served(target, client, request)
                                           : in_process(env, *engine, request, fmt::format("raw-{}", pair));
        const nlohmann::ordered_json extra = {{"pair", pair},
                                              {"order", served_first ? "served first" : "in-process first"},
                                              {"position", position}};
        rows.write(request_row(served ? served_rc : in_process_rc, extra, request, record));
        env.progress().advance(units, fmt::format("raw: pair {}/{}", pair + 1, o.raw_pairs));
      }
    }
  });
}

}  // namespace

Phase raw_phase() {
  return {"raw", "in-process engine vs served, ABBA pairs: decode and TTFT differences, gap p50/p99",
          raw_planned, run_raw};
}

}  // namespace nanoserve::bench
