// `nanoserve bench charts`: from the suite's JSONL rows, PNG charts (gnuplot) into docs/,
// results/suite/summary.md with the tables, and, when asked, the same tables spliced into
// the README between its markers.
#pragma once

#include <string>

namespace nanoserve::bench {

struct ChartsOptions {
  std::string results_dir = "results/suite";
  std::string docs_dir = "docs";
  std::string readme_path;  // empty: leave the README alone
};

// Throws when the rows cannot be read, gnuplot is missing or fails, or the README has no
// markers.
void make_charts(const ChartsOptions& options);

}  // namespace nanoserve::bench
