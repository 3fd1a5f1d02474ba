// Pulled models on disk: ROOT/OWNER/REPO/PATH-IN-REPO, where ROOT is models_dir(). Beside a
// repo's files, .files.json keeps the repo's file list as of the last pull, so a name resolves
// to the same files without the Hub. A download in progress is PATH.part (resumed by the next
// pull); a file that failed its checksum is moved aside to PATH.corrupt.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hub/model_name.h"
#include "hub/repo_files.h"

namespace nanoserve::hub {

// $XDG_CACHE_HOME/nanoserve, else ~/.cache/nanoserve; throws when neither variable is set.
std::filesystem::path nanoserve_cache_dir();
// nanoserve_cache_dir()/models.
std::filesystem::path models_dir();

struct CachedFile {
  std::string repo;  // owner/repo
  std::string file;  // the path inside the repo
  uint64_t size = 0;
  std::string state;  // "" (complete), "partial" (a download to resume) or "corrupt" (failed its checksum)
};

class ModelCache {
 public:
  explicit ModelCache(std::filesystem::path root) : root_(std::move(root)) {}

  std::filesystem::path path_of(const std::string& repo, const std::string& file) const;
  // Whether `file` of `repo` is here, whole (its size is the listed one).
  bool has(const std::string& repo, const RepoFile& file) const;

  std::optional<std::vector<RepoFile>> saved_file_list(const std::string& repo) const;
  void save_file_list(const std::string& repo, const std::vector<RepoFile>& files) const;

  // Every file here, by repo and path.
  std::vector<CachedFile> files() const;
  // Removes the files `name` means (with their partial and corrupt copies); returns their paths
  // in the repo. Throws std::runtime_error, saying what of the repo is here, when none is.
  std::vector<std::string> remove(const ModelName& name) const;

 private:
  std::filesystem::path root_;
};

}  // namespace nanoserve::hub
