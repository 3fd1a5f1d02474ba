// `nanoserve bench suite`: runs the chosen phases, one JSONL file per phase under the output
// folder (results/suite/PHASE.jsonl, started afresh when the phase runs), with a progress
// bar and an estimate of the time left. Ctrl-C stops after the request in flight and keeps
// the rows written.
#pragma once

#include "bench/suite_options.h"

namespace nanoserve::bench {

// The exit status: 0 when every phase wrote request rows (parts may have failed; their
// error rows say why), 1 when a phase wrote none, 130 when interrupted.
int run_suite(const SuiteOptions& options);

}  // namespace nanoserve::bench
