#include "bench/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bench/interrupt.h"
#include "bench/phases.h"

namespace nanoserve::bench {

std::vector<Phase> suite_phases() {
  return {context_phase(), raw_phase(), overhead_phase(), concurrency_phase(), prefix_phase(), spec_phase(),
          models_phase()};
}

bool run_planned_part(SuiteEnv& env, RowWriter& rows, const RowContext& context, const nlohmann::ordered_json& extra,
                      const std::string& label, double units, const std::function<void()>& part) {
  const double before = env.progress().done();
  const bool completed = run_part(env, rows, context, extra, label, part);
  const double counted = env.progress().done() - before;
  if (counted < units) env.progress().advance(units - counted, "");
  return completed;
}

namespace {

struct PhaseOutcome {
  std::string name;
  size_t requests = 0, errors = 0;
};

// Rows of each kind in a phase's file.
PhaseOutcome count_rows(const std::string& name, const std::string& path) {
  PhaseOutcome outcome{name};
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded()) continue;
    const std::string kind = row.value("kind", "");
    (kind == "request" || kind == "step" ? outcome.requests : outcome.errors)++;
  }
  return outcome;
}

}  // namespace

int run_suite(const SuiteOptions& requested) {
  const SuiteOptions options = resolve_options(requested);
  std::vector<Phase> chosen;
  for (Phase& phase : suite_phases())
    if (options.phases.empty() ||
        std::find(options.phases.begin(), options.phases.end(), phase.name) != options.phases.end())
      chosen.push_back(std::move(phase));

  install_interrupt_handlers();
  double planned = 0;
  for (const Phase& phase : chosen) planned += phase.planned_units(options);
  if (options.model_path.empty() && options.url.empty()) planned += synth_units(parse_model_spec(options.main_model));
  Progress progress(planned);
  SuiteEnv env(options, probe_host(), utc_timestamp(), progress);
  fmt::print(stderr, "nanoserve bench suite{}: {} into {}/ ({} threads)\n", options.quick ? " --quick" : "",
             [&] {
               std::string names;
               for (const Phase& p : chosen) names += (names.empty() ? "" : ", ") + p.name;
               return names;
             }(),
             options.out_dir, env.threads());

  std::vector<PhaseOutcome> outcomes;
  for (const Phase& phase : chosen) {
    if (interrupted()) break;
    const std::string path = (std::filesystem::path(options.out_dir) / (phase.name + ".jsonl")).string();
    {
      RowWriter rows(path);
      progress.message(fmt::format("{}: {}", phase.name, phase.about));
      run_planned_part(env, rows, env.row_context(phase.name, "", "", nullptr), {}, phase.name,
                       phase.planned_units(options), [&] { phase.run(env, rows); });
    }
    outcomes.push_back(count_rows(phase.name, path));
  }
  if (interrupted())
    progress.stop();
  else
    progress.finish();

  int status = 0;
  for (const PhaseOutcome& o : outcomes) {
    fmt::print(stderr, "  {:<12} {:>5} measured rows{}\n", o.name, o.requests,
               o.errors ? fmt::format(", {} failed part(s) (error rows say why)", o.errors) : "");
    if (o.requests == 0) status = 1;
  }
  if (interrupted()) {
    fmt::print(stderr, "interrupted: the rows written so far are kept in {}/\n", options.out_dir);
    return 130;
  }
  return status;
}

}  // namespace nanoserve::bench
