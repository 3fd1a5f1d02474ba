// concurrency: N streams started at the same instant against one server, per engine (the
// engine names are data: "sequential" runs one request at a time and queues the rest, the
// others get --parallel N). An engine this build does not have fails its part with the
// server's own message. Rows: one per stream per round, with its start offset from the
// round's start, so the charts can draw each stream's timeline.
#include <fmt/format.h>

#include "bench/interrupt.h"
#include "bench/phases.h"
#include "bench/stream_round.h"

namespace nanoserve::bench {
namespace {

double engine_units(const SuiteOptions& o) {
  return kServerStartUnits + request_units(o.concurrency_prompt, o.concurrency_max_tokens) +
         o.repeats * o.streams * request_units(o.concurrency_prompt, o.concurrency_max_tokens);
}

std::vector<std::string> engines(const SuiteEnv& env) {
  return env.external() ? std::vector<std::string>{"external"} : env.options().concurrency_engines;
}

double concurrency_planned(const SuiteOptions& o) {
  return engine_units(o) * static_cast<double>(o.url.empty() ? o.concurrency_engines.size() : 1);
}

void run_concurrency(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  for (const std::string& engine : engines(env)) {
    if (interrupted()) return;
    const RowContext rc = env.row_context("concurrency", engine, "served", &model);
    const nlohmann::ordered_json point = {{"streams", o.streams}};
    const std::string label = fmt::format("concurrency, {} engine", engine);
    run_planned_part(env, rows, rc, point, label, engine_units(o), [&] {
      env.progress().note(label + ": starting the server");
      std::vector<std::string> args = {"--model", model.path, "--engine", engine, "--threads",
                                       std::to_string(env.threads()), "--max-queue", std::to_string(o.streams + 8)};
      if (engine != "sequential") args.insert(args.end(), {"--parallel", std::to_string(o.streams)});
      Target target(env, args);
      env.progress().advance(kServerStartUnits, label + ": warm-up");
      const double units = request_units(o.concurrency_prompt, o.concurrency_max_tokens);
      StreamClient warm_client = target.client();
      measure_served(target, warm_client,
                     bench_request(model, o.concurrency_prompt, o.concurrency_max_tokens, prompt_seed({4, -1})));
      env.progress().advance(units, label);
      for (int round = 0; round < o.repeats && !interrupted(); ++round) {
        std::vector<BenchRequest> requests;
        for (int s = 0; s < o.streams; ++s)
          requests.push_back(
              bench_request(model, o.concurrency_prompt, o.concurrency_max_tokens, prompt_seed({4, round, s})));
        const std::vector<StreamResult> results = run_round(target, requests);
        for (int s = 0; s < o.streams; ++s) {
          nlohmann::ordered_json extra = point;
          extra["round"] = round;
          extra["stream"] = s;
          extra["start_offset_us"] = results[s].start_offset_us;
          rows.write(request_row(rc, extra, requests[s], results[s].record));
        }
        env.progress().advance(units * o.streams, fmt::format("{}: round {}/{}", label, round + 1, o.repeats));
      }
    });
  }
}

}  // namespace

Phase concurrency_phase() {
  return {"concurrency", "N simultaneous streams per engine: throughput, TTFT and per-stream decode",
          concurrency_planned, run_concurrency};
}

}  // namespace nanoserve::bench
