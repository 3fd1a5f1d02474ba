// `nanoserve pull NAME`, `nanoserve list` and `nanoserve rm NAME`: models from the Hugging Face
// Hub, kept in the cache (hub/model_cache.h) for --model NAME to load without network.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "hub/download_progress.h"
#include "hub/pull.h"

namespace nanoserve::cli {
namespace {

hub::ModelName name_of(const std::string& text) {
  const std::optional<hub::ModelName> name = hub::parse_model_name(text);
  if (!name)
    throw std::invalid_argument(text + " is a local path; give a Hugging Face model name, e.g. "
                                       "Qwen/Qwen2.5-0.5B-Instruct-GGUF or Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M");
  return *name;
}

void pull(const std::string& text) {
  const hub::ModelName name = name_of(text);
  const auto files = hub::pull_model(name, hub::HubConfig::from_environment(), hub::ModelCache(hub::models_dir()));
  uint64_t bytes = 0;
  for (const auto& f : files) {
    bytes += std::filesystem::file_size(f);
    fmt::print("{}\n", f.string());
  }
  fmt::print(stderr, "nanoserve: {}: {} in {} file{}, in the cache: serve it with nanoserve serve --model {}\n",
             name.text(), hub::human_bytes(bytes), files.size(), files.size() == 1 ? "" : "s", name.text());
  if (files.size() > 1)
    fmt::print(stderr, "nanoserve: note: the model is split into {} files; nanoserve loads a model in one file, so "
                       "join them first (llama.cpp's llama-gguf-split --merge)\n", files.size());
}

void list() {
  const std::filesystem::path root = hub::models_dir();
  const std::vector<hub::CachedFile> files = hub::ModelCache(root).files();
  if (files.empty()) {
    fmt::print(stderr, "nanoserve: no models in {}; pull one with nanoserve pull Qwen/Qwen2.5-0.5B-Instruct-GGUF\n",
               root.string());
    return;
  }
  size_t repo_width = 4, file_width = 4;
  for (const auto& f : files) {
    repo_width = std::max(repo_width, f.repo.size());
    file_width = std::max(file_width, f.file.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:>9}\n", "REPO", repo_width, "FILE", file_width, "SIZE");
  for (const auto& f : files) {
    const std::string note = f.state == "partial"   ? "  partial: pulling it again resumes"
                             : f.state == "corrupt" ? "  failed its checksum: not used (nanoserve rm removes it)"
                                                    : "";
    fmt::print("{:<{}}  {:<{}}  {:>9}{}\n", f.repo, repo_width, f.file, file_width, hub::human_bytes(f.size), note);
  }
}

void remove(const std::string& text) {
  const hub::ModelName name = name_of(text);
  for (const std::string& file : hub::ModelCache(hub::models_dir()).remove(name))
    fmt::print("removed {}/{}\n", name.repo, file);
}

}  // namespace

void add_pull_commands(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto* pull_cmd = app.add_subcommand(
      "pull", "Download a GGUF model from the Hugging Face Hub into the cache (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE)");
  pull_cmd->add_option("name", *name,
                       "owner/repo (its Q8_0, else Q4_K_M), owner/repo:QUANT, or owner/repo/FILE.gguf")
      ->required();
  pull_cmd->callback([name] { pull(*name); });

  app.add_subcommand("list", "The models in the cache: repo, file and size")->callback(list);

  auto* rm_cmd = app.add_subcommand("rm", "Remove a pulled model from the cache");
  rm_cmd->add_option("name", *name, "The name it was pulled by, or owner/repo/FILE as nanoserve list shows it")
      ->required();
  rm_cmd->callback([name] { remove(*name); });
}

}  // namespace nanoserve::cli
