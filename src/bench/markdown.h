// Markdown for the summary: tables with right-aligned figures, and the figure formats the
// tables share (a median with its min–max, sizes in MB).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/timing.h"

namespace nanoserve::bench {

class MarkdownTable {
 public:
  // With `figures`, columns after the first are right-aligned.
  explicit MarkdownTable(std::vector<std::string> header, bool figures = true);
  void add(std::vector<std::string> cells);  // as many as the header
  std::string text() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  bool figures_;
  std::vector<std::vector<std::string>> rows_;
};

// "123.4 (120.1–125.0)" with `decimals` places, the median alone when min == max or there
// is one value, "–" when there is none. `scale` multiplies every figure (1e-3: ms -> s).
std::string spread_text(const std::optional<Spread>& s, int decimals, double scale = 1);
// A number with `decimals` places, "–" when absent.
std::string number_text(const std::optional<double>& v, int decimals);
// Bytes as MB (10^6) with one decimal.
std::string mb_text(const std::optional<double>& bytes);

}  // namespace nanoserve::bench
