// overhead: what the server adds to its engine's own clock, on the same request (client
// TTFT − engine TTFT; client's last chunk − engine's last token). First against the mock
// engine with no token delay (nothing but the server is measured), plainly and with the
// benchmark's logit_bias (what parsing it costs), then the real engine on short requests.
#include <fmt/format.h>

#include "bench/interrupt.h"
#include "bench/phases.h"

namespace nanoserve::bench {
namespace {

constexpr int kMockPrompt = 32, kMockTokens = 64, kMockWarmups = 5;
constexpr int kEnginePrompt = 32, kEngineTokens = 16;

double mock_units(const SuiteOptions& o) {
  return kServerStartUnits + 2 * (kMockWarmups + o.overhead_mock_requests) * 0.1;
}
double engine_units(const SuiteOptions& o) {
  return kServerStartUnits + (1 + o.overhead_engine_requests) * request_units(kEnginePrompt, kEngineTokens);
}
double overhead_planned(const SuiteOptions& o) { return mock_units(o) + engine_units(o); }

// `requests` measured requests (after `warmups`) against one server; request i is make(i)
// (warm-ups: negative i).
void measure_many(SuiteEnv& env, RowWriter& rows, const RowContext& rc, Target& target,
                  const std::function<BenchRequest(int)>& make, int warmups, int requests, double units_each,
                  const std::string& label) {
  StreamClient client = target.client();
  for (int i = 0; i < warmups; ++i) measure_served(target, client, make(-1 - i));
  env.progress().advance(warmups * units_each, label);
  for (int i = 0; i < requests && !interrupted(); ++i) {
    const BenchRequest request = make(i);
    const StreamRecord record = measure_served(target, client, request);
    rows.write(request_row(rc, {{"request_index", i}}, request, record));
    env.progress().advance(units_each, fmt::format("{}: request {}/{}", label, i + 1, requests));
  }
}

void run_overhead(SuiteEnv& env, RowWriter& rows) {
  const SuiteOptions& o = env.options();
  const BenchModel& model = env.main_model();
  const std::string threads = std::to_string(env.threads());

  const RowContext mock_rc = env.row_context("overhead", "mock", "served", &model);
  if (env.external()) {
    env.progress().message("  overhead, mock engine: skipped (with --url the suite starts no server)");
    env.progress().advance(mock_units(o), "");
  } else {
    run_planned_part(env, rows, mock_rc, {}, "overhead, mock engine", mock_units(o), [&] {
      env.progress().note("overhead: starting the mock engine's server");
      Target target(env, {"--model", model.path, "--engine", "mock", "--mock-token-delay-us", "0"});
      env.progress().advance(kServerStartUnits, "overhead: mock");
      // The mock engine streams its fixed passage whatever the prompt; a request with the
      // benchmark's logit_bias costs what parsing it takes (the passage's banned tokens are
      // replaced by others).
      for (const bool with_bias : {false, true}) {
        auto make = [&](int i) {
          BenchRequest request = bench_request(model, kMockPrompt, kMockTokens, prompt_seed({3, 0, i}));
          if (!with_bias) request.banned.clear();
          return request;
        };
        measure_many(env, rows, mock_rc, target, make, kMockWarmups, o.overhead_mock_requests, 0.1,
                     with_bias ? "overhead: mock, logit_bias" : "overhead: mock");
        if (interrupted()) return;
      }
    });
  }
  if (interrupted()) return;
  const RowContext engine_rc = env.row_context("overhead", "sequential", "served", &model);
  run_planned_part(env, rows, engine_rc, {}, "overhead, sequential engine", engine_units(o), [&] {
    env.progress().note("overhead: starting the sequential engine's server");
    Target target(env, {"--model", model.path, "--engine", "sequential", "--threads", threads, "--ctx",
                        std::to_string(kEnginePrompt + kEngineTokens)});
    env.progress().advance(kServerStartUnits, "overhead: sequential");
    auto make = [&](int i) { return bench_request(model, kEnginePrompt, kEngineTokens, prompt_seed({3, 1, i})); };
    measure_many(env, rows, engine_rc, target, make, 1, o.overhead_engine_requests,
                 request_units(kEnginePrompt, kEngineTokens), "overhead: sequential");
  });
}

}  // namespace

Phase overhead_phase() {
  return {"overhead", "client clock minus engine clock on the same request: mock engine, then the real one",
          overhead_planned, run_overhead};
}

}  // namespace nanoserve::bench
