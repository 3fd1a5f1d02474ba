// `nanoserve lab`: prediction-first experiments that teach where the time goes. The reader
// reads a question and what is known (the model's shape, this machine's bandwidth, a rate
// measured just now), types a prediction, and the lab measures (on servers it starts, or the
// one at --url), then shows prediction, first-principles answer and measurement side by side
// with why they differ, and appends a JSONL row.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace nanoserve::lab {

struct LabOptions {
  std::vector<std::string> experiments;  // ids, or "all"; none: list them
  std::string model_path;
  std::string url;  // measure this server instead of starting any
  std::string api_key;
  std::string experiments_dir;  // read the files from here instead of the built-in ones
  std::string out_path = "lab.jsonl";
  std::string kv_type = "f16";
  int threads = 0;              // 0: physical cores
  int64_t max_context = 0;      // > 0: caps every prompt and server context (quick runs, tests)
  bool no_prompt = false;       // never ask; with no --predict the row records none
  std::optional<double> predict_all;              // --predict VALUE
  std::map<std::string, double> predict_by_id;    // --predict ID=VALUE
};

// Parses one --predict argument (VALUE or ID=VALUE) into `options`; throws
// std::invalid_argument for anything else.
void add_prediction(LabOptions& options, const std::string& argument);

// Runs the experiments (or lists them): the report on `out`, progress on `log`, predictions
// read from `in`. Returns the exit status: 0, 1 when an experiment failed, 2 for a usage error
// (an unknown experiment, no model).
int run_lab(const LabOptions& options, std::istream& in, std::ostream& out, std::ostream& log);

}  // namespace nanoserve::lab
