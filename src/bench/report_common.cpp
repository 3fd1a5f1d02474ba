#include <fmt/format.h>

#include "bench/report_sections.h"

namespace nanoserve::bench {

std::string image_markdown(const Chart& chart) {
  return "![" + chart.alt + "](" + std::string(kDocsPlaceholder) + "/" + chart.file + ")\n";
}

Section not_run(const std::string& title, const std::string& phase) {
  return {.title = title,
          .markdown = "Not measured in this run (`nanoserve bench suite " + phase + "` measures it).\n",
          .charts = {},
          .findings = {}};
}

std::string setup_text(const Row& row) {
  std::string text = row["model_file"].is_string() ? row["model_file"].get<std::string>() : "no model file";
  if (row["threads"].is_number()) text += fmt::format(", {} threads", row["threads"].get<int>());
  return text;
}

}  // namespace nanoserve::bench
