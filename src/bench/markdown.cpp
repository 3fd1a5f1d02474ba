#include "bench/markdown.h"

#include <fmt/format.h>

#include <stdexcept>

namespace nanoserve::bench {

MarkdownTable::MarkdownTable(std::vector<std::string> header, bool figures)
    : header_(std::move(header)), figures_(figures) {}

void MarkdownTable::add(std::vector<std::string> cells) {
  if (cells.size() != header_.size()) throw std::logic_error("a table row with the wrong number of cells");
  rows_.push_back(std::move(cells));
}

std::string MarkdownTable::text() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) out += " " + c + " |";
    return out + "\n";
  };
  std::string out = line(header_) + "|";
  for (size_t i = 0; i < header_.size(); ++i) out += i > 0 && figures_ ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string spread_text(const std::optional<Spread>& s, int decimals, double scale) {
  if (!s) return "–";
  const std::string median = fmt::format("{:.{}f}", s->median * scale, decimals);
  const std::string low = fmt::format("{:.{}f}", s->min * scale, decimals);
  const std::string high = fmt::format("{:.{}f}", s->max * scale, decimals);
  if (s->n < 2 || low == high) return median;
  return fmt::format("{} ({}–{})", median, low, high);
}

std::string number_text(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "–";
}

std::string mb_text(const std::optional<double>& bytes) {
  return bytes ? fmt::format("{:.1f}", *bytes / 1e6) : "–";
}

}  // namespace nanoserve::bench
