// One section of the summary per phase: its tables, its charts and a few sentences of what
// the numbers say. A phase without rows gives a section that says so (and no chart).
#pragma once

#include <string>
#include <vector>

#include "bench/gnuplot.h"
#include "bench/report_rows.h"

namespace nanoserve::bench {

// Where the markdown links images; replaced by the docs folder's path relative to the file.
inline constexpr const char* kDocsPlaceholder = "@DOCS@";

struct Section {
  std::string title;
  std::string markdown;
  std::vector<Chart> charts;
  std::vector<std::string> findings;  // sentences for "what this run shows"
};

Section context_section(const SuiteRows& rows);
Section raw_section(const SuiteRows& rows);
Section overhead_section(const SuiteRows& rows);
Section concurrency_section(const SuiteRows& rows);
Section prefix_section(const SuiteRows& rows);
Section spec_section(const SuiteRows& rows);
Section models_section(const SuiteRows& rows);

// "![alt](@DOCS@/file)\n"
std::string image_markdown(const Chart& chart);
// A section for a phase with no request rows.
Section not_run(const std::string& title, const std::string& phase);
// "model (weight type), N threads" from a phase's first row.
std::string setup_text(const Row& row);

}  // namespace nanoserve::bench
