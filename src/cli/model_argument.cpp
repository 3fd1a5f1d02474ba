#include "cli/model_argument.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include "hub/pull.h"

namespace nanoserve::cli {

std::string model_file(const std::string& model) {
  const std::optional<hub::ModelName> name = hub::parse_model_name(model);
  return name ? model_file(*name, hub::HubConfig::from_environment()) : model;
}

std::string model_file(const hub::ModelName& name, const hub::HubConfig& hub) {
  const std::vector<std::filesystem::path> files = hub::pull_model(name, hub, hub::ModelCache(hub::models_dir()));
  if (files.size() > 1) {
    std::vector<std::string> paths;
    for (const auto& f : files) paths.push_back(f.string());
    throw std::runtime_error(fmt::format(
        "{} is split into {} files ({}), and nanoserve loads a model in one file. Join them with llama.cpp's "
        "`llama-gguf-split --merge {} MERGED.gguf` and give MERGED.gguf, or choose a quant that is one file",
        name.text(), files.size(), fmt::join(paths, ", "), paths.front()));
  }
  fmt::print(stderr, "nanoserve: {} is {}\n", name.text(), files.front().string());
  return files.front().string();
}

}  // namespace nanoserve::cli
