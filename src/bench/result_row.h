// The suite's JSONL rows: one per measured request (kind "request"), one per timed forward
// step (kind "step", the spec phase's cost of a step by rows), or one per part of a phase that
// could not run (kind "error", with the reason). Every row repeats the machine,
// build and target it came from, so rows of different runs can share a file. Field names
// carry their units (_ms, _us, _tok_s, _bytes); figures a target does not report are null.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "bench/bench_model.h"
#include "bench/host_info.h"
#include "bench/request_body.h"
#include "bench/stream_record.h"

namespace nanoserve::bench {

inline constexpr int kRowSchema = 1;

// What every row of one part of a phase repeats.
struct RowContext {
  const HostInfo* host = nullptr;
  std::string run_id;      // the suite's start time; rows of one run share it
  std::string phase;
  std::string engine;      // "sequential", "mock", ... or "external" for --url
  std::string target;      // "served" (HTTP to a server) or "in-process"
  const BenchModel* model = nullptr;
  int threads = 0;         // 0: the server's default
};

// A request's row. `extra` (phase-specific fields: repeat, pair, streams, ...) comes after
// the context fields; prompt_tokens, max_tokens and logit_bias_entries are what `request`
// asked for (prompt_tokens from the usage report for a text prompt).
nlohmann::ordered_json request_row(const RowContext& context, const nlohmann::ordered_json& extra,
                                   const BenchRequest& request, const StreamRecord& record);

// One timed forward step of `rows` rows, in-process (kind "step"): the cost of a step by its rows.
nlohmann::ordered_json step_row(const RowContext& context, const nlohmann::ordered_json& extra, int64_t rows,
                                double step_ms);

// A part that failed: its context and the reason.
nlohmann::ordered_json error_row(const RowContext& context, const nlohmann::ordered_json& extra,
                                 const std::string& error);

// Writes rows to a JSONL file, one line each, flushed as written (an interrupted run keeps
// every row it wrote).
class RowWriter {
 public:
  // Creates the folder and starts the file afresh; throws when it cannot write.
  explicit RowWriter(const std::string& path);
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;

  void write(const nlohmann::ordered_json& row);
  size_t rows_written() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  size_t rows_ = 0;
};

}  // namespace nanoserve::bench
