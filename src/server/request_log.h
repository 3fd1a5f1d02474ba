// One log line per request (stderr): method, path, status, and for generations the id,
// prompt and completion tokens, queue ms, TTFT ms and decode tok/s from the engine's clock.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "engine/engine.h"

namespace nanoserve::server {

using Clock = std::chrono::steady_clock;

struct RequestLogRecord {
  Clock::time_point received = Clock::now();
  std::string id;                             // the response id; empty outside the generation routes
  std::optional<engine::RequestStats> stats;  // set when a generation ended
  bool cancelled = false;                     // the client left mid-generation
};

std::string request_log_line(const std::string& method, const std::string& path, int status,
                             const RequestLogRecord& record, Clock::time_point now);

// The record of the request this thread is serving. A worker of http::Server runs a request's
// handler and then its `answered` hook on one thread, so the routes fill this in and the
// logger reads it with no lock and no map from requests to records.
RequestLogRecord& this_thread_request_log();

}  // namespace nanoserve::server
