#include "bench/row_schema.h"

#include <map>

#include "bench/result_row.h"

namespace nanoserve::bench {
namespace {

enum Type : unsigned { kInteger = 1, kNumber = 2, kString = 4, kBool = 8, kArray = 16, kNull = 32 };

struct Field {
  const char* name;
  unsigned types;
};

const std::vector<Field> kCommon = {
    {"schema", kInteger},  {"kind", kString},           {"run_id", kString},        {"date", kString},
    {"cpu", kString},      {"logical_cores", kInteger}, {"physical_cores", kInteger}, {"ram_bytes", kInteger},
    {"os", kString},       {"git_sha", kString},        {"build_type", kString},    {"phase", kString},
    {"engine", kString},   {"target", kString},         {"model_file", kString | kNull},
    {"model_preset", kString | kNull}, {"weight_type", kString | kNull}, {"threads", kInteger | kNull},
};

const std::vector<Field> kRequest = {
    {"prompt_tokens", kInteger | kNull},     {"max_tokens", kInteger},
    {"logit_bias_entries", kInteger},        {"completion_tokens", kInteger | kNull},
    {"cached_tokens", kInteger | kNull},
    {"text_chunks", kInteger},               {"exact_tokens", kBool},
    {"finish_reason", kString},              {"client_ttft_ms", kNumber | kNull},
    {"client_last_chunk_ms", kNumber | kNull}, {"client_end_ms", kNumber},
    {"chunk_arrival_us", kArray},            {"gap_p50_ms", kNumber | kNull},
    {"gap_p99_ms", kNumber | kNull},         {"client_decode_tok_s", kNumber | kNull},
    {"engine_queue_ms", kNumber | kNull},    {"engine_ttft_ms", kNumber | kNull},
    {"engine_prefill_tok_s", kNumber | kNull}, {"engine_decode_tok_s", kNumber | kNull},
    {"engine_last_token_ms", kNumber | kNull}, {"overhead_ttft_ms", kNumber | kNull},
    {"overhead_total_ms", kNumber | kNull},  {"peak_memory_bytes", kInteger | kNull},
};

// Fields of every row that rows written before NANOSERVE_SIMD lack: checked where present.
const std::vector<Field> kCommonLater = {{"simd", kString}};

// Request fields that rows written before speculative decoding lack: checked where present.
const std::vector<Field> kRequestLater = {
    {"engine_decode_steps", kInteger | kNull}, {"engine_draft_tokens", kInteger | kNull},
    {"engine_accepted_tokens", kInteger | kNull}, {"engine_drafted_at", kArray},
    {"engine_accepted_at", kArray},
};

const std::vector<Field> kStep = {{"rows", kInteger}, {"step_ms", kNumber}, {"case", kString}, {"repeat", kInteger},
                                  {"context_tokens", kInteger}, {"weight_bytes_per_token", kInteger},
                                  {"matrix_elements", kInteger}};

// Request fields that a phase's rows written before they existed lack: checked where present.
const std::map<std::string, std::vector<Field>> kPhaseRequestLater = {
    {"context", {{"kv_type", kString}}},  // before the q8_0 KV cache: f16
    // before the batch engine's arms: the sequential engine, one stream
    {"raw", {{"in_process_engine", kString}, {"streams", kInteger}, {"stream", kInteger}, {"start_offset_us", kInteger}}},
};

// What each phase adds to its request rows.
const std::map<std::string, std::vector<Field>> kPhaseRequest = {
    {"context", {{"context_size", kInteger}, {"kv_cache_bytes", kInteger}, {"model_file_bytes", kInteger},
                 {"repeat", kInteger}}},
    {"raw", {{"pair", kInteger}, {"order", kString}, {"position", kInteger}}},
    {"overhead", {{"request_index", kInteger}}},
    {"concurrency", {{"streams", kInteger}, {"round", kInteger}, {"stream", kInteger}, {"start_offset_us", kInteger}}},
    {"prefix", {{"case", kString}, {"repeat", kInteger}}},
    {"spec", {{"case", kString}, {"spec", kString}, {"repeat", kInteger}}},
    {"models", {{"model_spec", kString}, {"measure", kString}, {"repeat", kInteger}, {"model_file_bytes", kInteger},
                {"weight_bytes_per_token", kInteger}, {"kv_bytes_per_position", kInteger},
                {"read_bandwidth_bytes_s", kNumber}}},
    {"client", {{"request_index", kInteger}}},
};

bool has_type(const nlohmann::json& v, unsigned types) {
  return ((types & kInteger) && v.is_number_integer()) || ((types & kNumber) && v.is_number()) ||
         ((types & kString) && v.is_string()) || ((types & kBool) && v.is_boolean()) ||
         ((types & kArray) && v.is_array()) || ((types & kNull) && v.is_null());
}

std::string type_names(unsigned types) {
  std::string out;
  for (const auto& [bit, name] : std::vector<std::pair<unsigned, const char*>>{
           {kInteger, "an integer"}, {kNumber, "a number"}, {kString, "a string"}, {kBool, "a boolean"},
           {kArray, "an array"}, {kNull, "null"}})
    if (types & bit) out += (out.empty() ? "" : " or ") + std::string(name);
  return out;
}

void check(const nlohmann::json& row, const std::vector<Field>& fields, std::vector<std::string>& problems,
           bool required = true) {
  for (const Field& f : fields) {
    const auto it = row.find(f.name);
    if (it == row.end()) {
      if (required) problems.push_back(std::string("field '") + f.name + "' is missing");
    } else if (!has_type(*it, f.types)) {
      problems.push_back(std::string("field '") + f.name + "' should be " + type_names(f.types) + ", is " + it->dump());
    }
  }
}

// The arrival times are whole microseconds, as many as the text chunks, never decreasing.
void check_arrivals(const nlohmann::json& row, std::vector<std::string>& problems) {
  const nlohmann::json& arrivals = row["chunk_arrival_us"];
  if (row["text_chunks"].is_number_integer() && arrivals.size() != row["text_chunks"].get<size_t>())
    problems.push_back("chunk_arrival_us has " + std::to_string(arrivals.size()) + " entries for " +
                       row["text_chunks"].dump() + " text chunks");
  int64_t previous = 0;
  for (const auto& t : arrivals) {
    if (!t.is_number_integer() || t.get<int64_t>() < previous) {
      problems.push_back("chunk_arrival_us must be non-decreasing integers (µs), found " + t.dump());
      return;
    }
    previous = t.get<int64_t>();
  }
}

}  // namespace

std::vector<std::string> schema_problems(const nlohmann::json& row) {
  std::vector<std::string> problems;
  if (!row.is_object()) return {"a row must be a JSON object"};
  check(row, kCommon, problems);
  check(row, kCommonLater, problems, false);
  if (!problems.empty()) return problems;
  if (row["schema"] != kRowSchema) problems.push_back("schema is " + row["schema"].dump() + ", expected " + std::to_string(kRowSchema));
  const std::string kind = row["kind"];
  if (kind == "error") {
    check(row, {{"error", kString}}, problems);
  } else if (kind == "request") {
    check(row, kRequest, problems);
    check(row, kRequestLater, problems, false);
    const auto phase = kPhaseRequest.find(row["phase"].get<std::string>());
    if (phase == kPhaseRequest.end())
      problems.push_back("unknown phase '" + row["phase"].get<std::string>() + "'");
    else
      check(row, phase->second, problems);
    if (const auto later = kPhaseRequestLater.find(row["phase"].get<std::string>()); later != kPhaseRequestLater.end())
      check(row, later->second, problems, false);
    if (problems.empty()) check_arrivals(row, problems);
  } else if (kind == "step") {
    check(row, kStep, problems);
  } else {
    problems.push_back("kind must be \"request\", \"step\" or \"error\", is \"" + kind + "\"");
  }
  return problems;
}

}  // namespace nanoserve::bench
