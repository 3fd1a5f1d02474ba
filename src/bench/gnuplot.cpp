#include "bench/gnuplot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace nanoserve::bench {
namespace {

namespace fs = std::filesystem;

std::string preamble(const Chart& chart, const fs::path& output) {
  return "set terminal pngcairo size " + std::to_string(chart.width) + "," + std::to_string(chart.height) +
         " noenhanced font 'DejaVu Sans,11'\n"
         "set output " + quoted(output.string()) + "\n"
         "set encoding utf8\n"
         "set grid lc rgb '#dddddd'\n"
         "set key box opaque\n"
         "set style line 1 lc rgb '#1f77b4' lw 2 pt 7 ps 1.1\n"
         "set style line 2 lc rgb '#ff7f0e' lw 2 pt 5 ps 1.1\n"
         "set style line 3 lc rgb '#2ca02c' lw 2 pt 9 ps 1.2\n"
         "set style line 4 lc rgb '#d62728' lw 2 pt 11 ps 1.2\n"
         "set style line 5 lc rgb '#9467bd' lw 2 pt 13 ps 1.2\n"
         "set style line 6 lc rgb '#7f7f7f' lw 1.5 dt 2\n";
}

// Runs a command; its exit status, with stdout and stderr in `output`.
int run_command(const std::string& command, std::string& output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + command);
  std::array<char, 4096> buf{};
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) output.append(buf.data(), n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

std::string datablock(const std::string& name, const std::vector<std::string>& lines) {
  std::string out = "$" + name + " << EOD\n";
  for (const auto& line : lines) out += line + "\n";
  return out + "EOD\n";
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void render_chart(const Chart& chart, const std::string& docs_dir) {
  fs::create_directories(docs_dir);
  const fs::path output = fs::absolute(fs::path(docs_dir) / chart.file);
  const fs::path script = fs::temp_directory_path() / ("nanoserve-chart-" + std::to_string(getpid()) + ".gp");
  {
    std::ofstream out(script);
    out << preamble(chart, output) << chart.script << "\nunset output\n";
    if (!out) throw std::runtime_error("cannot write " + script.string());
  }
  fs::remove(output);
  std::string messages;
  const int status = run_command("gnuplot " + script.string(), messages);
  fs::remove(script);
  if (status == 127) throw std::runtime_error("gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)");
  if (status != 0 || !fs::exists(output) || fs::file_size(output) == 0)
    throw std::runtime_error("gnuplot failed on " + chart.file + ":\n" + messages);
}

}  // namespace nanoserve::bench
