#include "bench/report_rows.h"

#include <filesystem>
#include <fstream>

#include "bench/row_schema.h"
#include "bench/suite_options.h"

namespace nanoserve::bench {

const PhaseRows& SuiteRows::phase(const std::string& name) const {
  static const PhaseRows none;
  const auto it = phases.find(name);
  return it == phases.end() ? none : it->second;
}

SuiteRows load_suite_rows(const std::string& dir) {
  SuiteRows out;
  for (const std::string& name : phase_names()) {
    const std::filesystem::path path = std::filesystem::path(dir) / (name + ".jsonl");
    std::ifstream in(path);
    if (!in) continue;
    PhaseRows& rows = out.phases[name];
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (line.empty()) continue;
      const std::string where = path.string() + ":" + std::to_string(line_number);
      Row row = Row::parse(line, nullptr, false);
      if (row.is_discarded()) {
        out.warnings.push_back(where + ": not JSON, skipped");
        continue;
      }
      if (const auto problems = schema_problems(row); !problems.empty()) {
        out.warnings.push_back(where + ": " + problems.front() + ", skipped");
        continue;
      }
      const std::string kind = row["kind"];
      (kind == "request" ? rows.requests : kind == "step" ? rows.steps : rows.errors).push_back(std::move(row));
    }
  }
  return out;
}

std::optional<double> number(const Row& row, const std::string& key) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<Spread> spread_of(const std::vector<const Row*>& rows, const std::string& key) {
  std::vector<double> values;
  for (const Row* row : rows)
    if (auto v = number(*row, key)) values.push_back(*v);
  return spread(std::move(values));
}

std::vector<const Row*> rows_where(const std::vector<Row>& rows, const std::function<bool(const Row&)>& keep) {
  std::vector<const Row*> out;
  for (const Row& row : rows)
    if (keep(row)) out.push_back(&row);
  return out;
}

}  // namespace nanoserve::bench
