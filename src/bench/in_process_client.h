// The "raw" arm: the same request submitted straight to an Engine in this process, timed
// the way the HTTP client times a stream (clock started just before submit, each piece of
// text stamped as the reader takes it), so the only difference between the arms is the
// server and the HTTP between them.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "bench/request_body.h"
#include "bench/stream_record.h"
#include "engine/engine.h"

namespace nanoserve::bench {

// Never throws for what the engine does: an error event, a stream silent for `timeout`, or
// `stop` (Ctrl-C) ends in StreamRecord::error (and the request is cancelled).
StreamRecord run_in_process(engine::Engine& engine, const BenchRequest& request, const std::string& id,
                            std::chrono::seconds timeout, const std::atomic<bool>* stop = nullptr);

}  // namespace nanoserve::bench
