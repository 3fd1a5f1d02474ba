// Streams started at the same instant against one server: every stream's connection is opened
// first, then all streams are released at once. The concurrency and prefix phases measure
// with a round (one request a stream); the spec phase also keeps streams in flight (each stream
// sends its next request as soon as its last one ended, as a client under sustained load does).
// The raw phase also runs a round straight on an Engine in this process, released the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/suite_env.h"
#include "engine/engine.h"

namespace nanoserve::bench {

struct StreamResult {
  StreamRecord record;
  int64_t start_offset_us = 0;  // when its request left, from the release of the streams
};

// One round, a stream per request; throws RequestFailed when any of them failed.
std::vector<StreamResult> run_round(Target& target, const std::vector<BenchRequest>& requests);

// A stream per queue, each sending its queue's requests one after another; results[s][j] is
// queue s's request j. Throws RequestFailed when any of them failed (a stream stops at its first).
std::vector<std::vector<StreamResult>> run_streams(Target& target,
                                                   const std::vector<std::vector<BenchRequest>>& queues);

// One round submitted to `engine` in this process: a thread per request, all released at once
// and each timed as run_in_process times one (ids `id_prefix`-0, -1, ...). Never throws for what
// the engine does: a failed stream's record carries its error.
std::vector<StreamResult> run_in_process_round(engine::Engine& engine, const std::vector<BenchRequest>& requests,
                                               const std::string& id_prefix, std::chrono::seconds timeout,
                                               const std::atomic<bool>* stop = nullptr);

}  // namespace nanoserve::bench
