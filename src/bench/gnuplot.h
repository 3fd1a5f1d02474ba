// Charts drawn by gnuplot (pngcairo): a chart is a gnuplot script with its data inline
// (datablocks), run after a shared preamble (size, font, grid, the suite's colours).
#pragma once

#include <string>
#include <vector>

namespace nanoserve::bench {

struct Chart {
  std::string file;  // name of the PNG under the docs folder
  std::string alt;   // what it shows, for the markdown
  int width = 960, height = 600;
  std::string script;  // gnuplot commands; line styles 1..6 are the suite's colours
};

// "$name << EOD\n" + one line per entry + "EOD\n". Write a missing value as NaN.
std::string datablock(const std::string& name, const std::vector<std::string>& lines);
// `text` as a gnuplot string literal (single quotes).
std::string quoted(const std::string& text);

// Runs gnuplot on the chart, writing DOCS/chart.file. Throws with gnuplot's own messages
// when it fails or leaves no image, or when gnuplot is not installed.
void render_chart(const Chart& chart, const std::string& docs_dir);

}  // namespace nanoserve::bench
