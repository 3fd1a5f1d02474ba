// The suite's phases. Each plans its work (for the progress bar's estimate) and runs,
// writing one row per measured request; a part that fails (a server that does not start,
// an engine this build lacks) writes an error row and the phase goes on with the next.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/result_row.h"
#include "bench/suite_env.h"
#include "bench/suite_options.h"

namespace nanoserve::bench {

struct Phase {
  std::string name;
  std::string about;
  std::function<double(const SuiteOptions&)> planned_units;
  std::function<void(SuiteEnv&, RowWriter&)> run;
};

Phase context_phase();      // prompt length sweep: TTFT, prefill and decode rates, memory
Phase raw_phase();          // in-process engine vs served, ABBA pairs
Phase overhead_phase();     // client clock minus engine clock, mock and real engine
Phase concurrency_phase();  // N simultaneous streams per engine
Phase prefix_phase();       // the prefix cache: cold vs warm TTFT, restart, shared system prompt
Phase spec_phase();         // speculative decoding: step cost by rows, tokens per read, streams, no-cost check
Phase models_phase();       // synth presets × weight types: decode, TTFT, memory, GB/s

// All of them, in the suite's order (phase_names()).
std::vector<Phase> suite_phases();

// Runs `part` as one part of a phase planned at `units`: whatever it did not count when it
// ends (early, on failure) is counted then, so the estimate stays honest.
bool run_planned_part(SuiteEnv& env, RowWriter& rows, const RowContext& context, const nlohmann::ordered_json& extra,
                      const std::string& label, double units, const std::function<void()>& part);

}  // namespace nanoserve::bench
