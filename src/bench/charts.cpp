#include "bench/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bench/markdown.h"
#include "bench/readme_splice.h"
#include "bench/report_sections.h"

namespace nanoserve::bench {
namespace {

namespace fs = std::filesystem;

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// The docs folder as seen from the folder of `file`.
std::string docs_relative_to(const std::string& docs_dir, const std::string& file) {
  const fs::path from = fs::absolute(fs::path(file)).parent_path();
  return fs::relative(fs::absolute(docs_dir), from).generic_string();
}

std::vector<const Row*> all_rows(const SuiteRows& rows) {
  std::vector<const Row*> out;
  for (const auto& [name, phase] : rows.phases) {
    for (const Row& r : phase.requests) out.push_back(&r);
    for (const Row& r : phase.errors) out.push_back(&r);
  }
  return out;
}

std::string machine_table(const SuiteRows& rows) {
  const std::vector<const Row*> all = all_rows(rows);
  const Row* newest = *std::max_element(all.begin(), all.end(), [](const Row* a, const Row* b) {
    return (*a)["date"].get<std::string>() < (*b)["date"].get<std::string>();
  });
  std::set<std::string> runs, shas;
  for (const Row* r : all) {
    runs.insert((*r)["run_id"].get<std::string>());
    shas.insert((*r)["git_sha"].get<std::string>());
  }
  const Row& r = *newest;
  MarkdownTable t({"", ""}, false);
  t.add({"date", r["date"].get<std::string>() + (runs.size() > 1 ? fmt::format(" (rows of {} runs)", runs.size()) : "")});
  t.add({"CPU", r["cpu"].get<std::string>()});
  if (r.contains("simd")) t.add({"SIMD target", r["simd"].get<std::string>()});
  t.add({"cores", fmt::format("{} logical, {} physical", r["logical_cores"].get<int>(), r["physical_cores"].get<int>())});
  t.add({"RAM", fmt::format("{:.1f} GB", r["ram_bytes"].get<double>() / 1e9)});
  t.add({"OS", r["os"].get<std::string>()});
  std::string sha;
  for (const auto& s : shas) sha += (sha.empty() ? "" : ", ") + s;
  t.add({"git sha", sha});
  t.add({"build", r["build_type"].get<std::string>()});
  return t.text();
}

std::string exactness_text(const SuiteRows& rows) {
  size_t total = 0, exact = 0;
  for (const auto& [name, phase] : rows.phases)
    for (const Row& r : phase.requests)
      if (r["engine"] != "mock") {
        ++total;
        exact += r["exact_tokens"].get<bool>() ? 1 : 0;
      }
  if (total == 0) return "";
  if (exact == total)
    return fmt::format("Every one of the {} requests to a model generated exactly its max_tokens tokens, each arriving as "
                       "its own chunk (`exact_tokens` in the rows).\n",
                       total);
  return fmt::format("{} of {} requests to a model did not generate exactly max_tokens tokens as separate chunks "
                     "(`exact_tokens: false` in the rows); their gaps and rates are less exact.\n",
                     total - exact, total);
}

// The first line of an error, and the last telling line of a server log quoted in it.
std::string error_summary(const std::string& error) {
  std::istringstream in(error);
  std::string first, line, telling;
  std::getline(in, first);
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (line.rfind("    ", 0) != 0 || start == std::string::npos) continue;  // log lines are indented
    if (line.find("Run with --help") != std::string::npos) continue;
    telling = line.substr(start);
  }
  return telling.empty() ? first : first + ": `" + telling + "`";
}

std::string failures_text(const SuiteRows& rows, const std::string& heading) {
  std::string out;
  for (const auto& [name, phase] : rows.phases)
    for (const Row& r : phase.errors) {
      const std::string error = error_summary(r["error"]);
      std::string what = name;
      if (!r["engine"].get<std::string>().empty()) what += ", " + r["engine"].get<std::string>() + " engine";
      if (r.contains("model_spec")) what += ", " + r["model_spec"].get<std::string>();
      out += fmt::format("- {}: {}\n", what, error);
    }
  return out.empty() ? "" : heading + " Parts that did not run\n\n" + out + "\n";
}

// `heading` starts each section's title ("##" in summary.md, deeper inside the README).
std::string summary_body(const SuiteRows& rows, const std::vector<Section>& sections, const std::string& heading) {
  std::string out = heading + " Machine and build\n\n" + machine_table(rows) + "\n";
  std::string findings;
  for (const Section& s : sections)
    for (const auto& f : s.findings) findings += "- " + f + "\n";
  if (!findings.empty()) out += heading + " What this run shows\n\n" + findings + "\n";
  out += exactness_text(rows);
  if (out.back() != '\n' || out[out.size() - 2] != '\n') out += "\n";
  for (const Section& s : sections) out += heading + " " + s.title + "\n\n" + s.markdown + "\n";
  out += failures_text(rows, heading);
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void make_charts(const ChartsOptions& o) {
  const SuiteRows rows = load_suite_rows(o.results_dir);
  for (const std::string& warning : rows.warnings) fmt::print(stderr, "nanoserve bench charts: {}\n", warning);
  if (all_rows(rows).empty())
    throw std::runtime_error("no rows in " + o.results_dir + "/*.jsonl: run `nanoserve bench suite` first");
  const std::vector<Section> sections = {context_section(rows), raw_section(rows), overhead_section(rows),
                                         concurrency_section(rows), prefix_section(rows), spec_section(rows),
                                         models_section(rows)};
  for (const Section& s : sections)
    for (const Chart& c : s.charts) {
      render_chart(c, o.docs_dir);
      fmt::print("wrote {}\n", (fs::path(o.docs_dir) / c.file).string());
    }
  const std::string summary_path = (fs::path(o.results_dir) / "summary.md").string();
  write_file(summary_path, "# nanoserve benchmark results\n\nGenerated by `nanoserve bench charts` from " +
                               o.results_dir + "/*.jsonl.\n\n" +
                               replace_all(summary_body(rows, sections, "##"), kDocsPlaceholder,
                                           docs_relative_to(o.docs_dir, summary_path)));
  fmt::print("wrote {}\n", summary_path);
  if (!o.readme_path.empty()) {
    // The README holds them under its own "### Results".
    splice_file(o.readme_path, replace_all(summary_body(rows, sections, "####"), kDocsPlaceholder,
                                           docs_relative_to(o.docs_dir, o.readme_path)));
    fmt::print("updated the results in {}\n", o.readme_path);
  }
}

}  // namespace nanoserve::bench
