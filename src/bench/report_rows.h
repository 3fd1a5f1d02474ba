// The suite's rows as the charts and tables read them: every PHASE.jsonl of a results
// folder, checked against the schema, split into measured requests and failed parts, and
// small helpers to pick figures out of them.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/timing.h"

namespace nanoserve::bench {

using Row = nlohmann::json;

struct PhaseRows {
  std::vector<Row> requests;  // kind "request"
  std::vector<Row> steps;     // kind "step"
  std::vector<Row> errors;    // kind "error"
};

struct SuiteRows {
  std::map<std::string, PhaseRows> phases;  // by phase name
  std::vector<std::string> warnings;        // rows skipped, and why

  const PhaseRows& phase(const std::string& name) const;
};

// Reads DIR/PHASE.jsonl for every phase that has one. A line that is not JSON, or a row
// that does not match the schema, is skipped with a warning naming file and line.
SuiteRows load_suite_rows(const std::string& dir);

// A number field, when present and not null.
std::optional<double> number(const Row& row, const std::string& key);
// Median, min and max of a field over rows (those that have it).
std::optional<Spread> spread_of(const std::vector<const Row*>& rows, const std::string& key);
// The rows for which `keep` is true.
std::vector<const Row*> rows_where(const std::vector<Row>& rows, const std::function<bool(const Row&)>& keep);

}  // namespace nanoserve::bench
