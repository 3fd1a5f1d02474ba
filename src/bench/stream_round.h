// N streams started at the same instant against one server: every stream's connection is
// opened first, then all requests are released at once. The concurrency and prefix phases
// measure with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/suite_env.h"

namespace nanoserve::bench {

struct StreamResult {
  StreamRecord record;
  int64_t start_offset_us = 0;  // when its request left, from the round's start
};

// One round, a stream per request; throws RequestFailed when any of them failed.
std::vector<StreamResult> run_round(Target& target, const std::vector<BenchRequest>& requests);

}  // namespace nanoserve::bench
