#include "bench/result_row.h"

#include <filesystem>
#include <stdexcept>

#include "bench/timing.h"

namespace nanoserve::bench {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json context_fields(const RowContext& c, const char* kind) {
  json row = {{"schema", kRowSchema}, {"kind", kind}, {"run_id", c.run_id}, {"date", utc_timestamp()}};
  if (c.host) {
    row["cpu"] = c.host->cpu;
    row["logical_cores"] = c.host->logical_cores;
    row["physical_cores"] = c.host->physical_cores;
    row["ram_bytes"] = c.host->ram_bytes;
    row["os"] = c.host->os;
    row["simd"] = c.host->simd;
    row["git_sha"] = c.host->git_sha;
    row["build_type"] = c.host->build_type;
  }
  row["phase"] = c.phase;
  row["engine"] = c.engine;
  row["target"] = c.target;
  row["model_file"] = c.model ? json(c.model->file_name) : json(nullptr);
  row["model_preset"] = c.model && !c.model->preset.empty() ? json(c.model->preset) : json(nullptr);
  row["weight_type"] = c.model ? json(c.model->weight_type) : json(nullptr);
  row["threads"] = c.threads > 0 ? json(c.threads) : json(nullptr);
  return row;
}

void append(json& row, const json& extra) {
  for (const auto& [key, value] : extra.items()) row[key] = value;
}

}  // namespace

json request_row(const RowContext& context, const json& extra, const BenchRequest& request, const StreamRecord& r) {
  json row = context_fields(context, "request");
  append(row, extra);
  const ClientFigures client = client_figures(r);
  const Overhead over = overhead(r);
  const int64_t chunks = static_cast<int64_t>(r.chunk_us.size());
  const int max_tokens = request.max_tokens;
  row["prompt_tokens"] = request.prompt.empty() ? or_null(r.prompt_tokens) : json(request.prompt.size());
  row["max_tokens"] = max_tokens;
  row["logit_bias_entries"] = request.banned.size();
  row["completion_tokens"] = or_null(r.completion_tokens);
  row["cached_tokens"] = or_null(r.cached_tokens);
  row["text_chunks"] = chunks;
  // Every asked-for token was generated and arrived as its own chunk of text.
  row["exact_tokens"] = r.finish_reason == "length" && chunks == max_tokens &&
                        (!r.completion_tokens || *r.completion_tokens == max_tokens);
  row["finish_reason"] = r.finish_reason;
  row["client_ttft_ms"] = or_null(client.ttft_ms);
  row["client_last_chunk_ms"] = or_null(client.last_chunk_ms);
  row["client_end_ms"] = client.end_ms;
  row["chunk_arrival_us"] = r.chunk_us;
  row["gap_p50_ms"] = or_null(client.gap_p50_ms);
  row["gap_p99_ms"] = or_null(client.gap_p99_ms);
  row["client_decode_tok_s"] = or_null(client.decode_tok_s);
  const EngineClock engine = r.engine.value_or(EngineClock{});
  row["engine_queue_ms"] = or_null(engine.queue_ms);
  row["engine_ttft_ms"] = or_null(engine.ttft_ms);
  row["engine_prefill_tok_s"] = or_null(engine.prefill_tok_s);
  row["engine_decode_tok_s"] = or_null(engine.decode_tok_s);
  row["engine_last_token_ms"] = r.engine ? or_null(engine_last_token_ms(engine, r.completion_tokens)) : json(nullptr);
  row["overhead_ttft_ms"] = or_null(over.ttft_ms);
  row["overhead_total_ms"] = or_null(over.total_ms);
  row["peak_memory_bytes"] = or_null(engine.peak_memory_bytes);
  row["engine_decode_steps"] = or_null(engine.decode_steps);
  row["engine_draft_tokens"] = or_null(engine.draft_tokens);
  row["engine_accepted_tokens"] = or_null(engine.accepted_tokens);
  row["engine_drafted_at"] = engine.drafted_at;
  row["engine_accepted_at"] = engine.accepted_at;
  return row;
}

json step_row(const RowContext& context, const json& extra, int64_t rows, double step_ms) {
  json row = context_fields(context, "step");
  append(row, extra);
  row["rows"] = rows;
  row["step_ms"] = step_ms;
  return row;
}

json error_row(const RowContext& context, const json& extra, const std::string& error) {
  json row = context_fields(context, "error");
  append(row, extra);
  row["error"] = error;
  return row;
}

RowWriter::RowWriter(const std::string& path) : path_(path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw std::runtime_error("cannot open " + path + " for writing");
}

RowWriter::~RowWriter() {
  if (file_) std::fclose(file_);
}

void RowWriter::write(const json& row) {
  const std::string line = row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw std::runtime_error("cannot write to " + path_);
  ++rows_;
}

}  // namespace nanoserve::bench
