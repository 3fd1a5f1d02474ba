#include "hub/pull.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hub/sha256.h"

namespace nanoserve::hub {
namespace {

namespace fs = std::filesystem;

// Downloads one file into the cache unless it is there, and checks it before giving it its name.
void fetch(const HubConfig& hub, const ModelCache& cache, const std::string& repo, const RepoFile& file) {
  if (cache.has(repo, file)) return;
  const fs::path path = cache.path_of(repo, file.path);
  const fs::path part = path.string() + ".part";
  fs::create_directories(path.parent_path());
  // A part of the whole size was downloaded, but not yet checked when its pull stopped.
  std::error_code ec;
  if (!fs::is_regular_file(part, ec) || fs::file_size(part, ec) != file.size) download_file(hub, repo, file, part);
  if (!file.sha256.empty()) {
    const std::string actual = sha256_of_file(part);
    if (actual != file.sha256) {
      const fs::path corrupt = path.string() + ".corrupt";
      fs::rename(part, corrupt);
      throw std::runtime_error(fmt::format(
          "{} failed its checksum: its SHA-256 is {}, the Hub states {}. It was moved aside to {} and is not used; "
          "pull again to download it anew (nanoserve rm removes it)",
          file.path, actual, file.sha256, corrupt.string()));
    }
  }
  fs::rename(part, path);
}

std::vector<fs::path> paths_of(const ModelCache& cache, const std::string& repo, const std::vector<RepoFile>& files) {
  std::vector<fs::path> paths;
  for (const RepoFile& f : files) paths.push_back(cache.path_of(repo, f.path));
  return paths;
}

}  // namespace

std::vector<fs::path> pull_model(const ModelName& name, const HubConfig& hub, const ModelCache& cache) {
  if (const auto saved = cache.saved_file_list(name.repo)) {
    try {
      const std::vector<RepoFile> files = select_files(*saved, name);
      if (std::all_of(files.begin(), files.end(), [&](const RepoFile& f) { return cache.has(name.repo, f); }))
        return paths_of(cache, name.repo, files);
    } catch (const std::runtime_error&) {
      // The last pull's list does not have what the name means: the Hub's may.
    }
  }
  if (hub.offline)
    throw std::runtime_error(fmt::format("{} is not in the cache ({}), and HF_HUB_OFFLINE is set: pull it once with "
                                         "network (nanoserve pull {}), or give a local file",
                                         name.text(), cache.path_of(name.repo, "").string(), name.text()));
  const std::vector<RepoFile> listed = list_repo_files(hub, name.repo);
  cache.save_file_list(name.repo, listed);
  const std::vector<RepoFile> files = select_files(listed, name);
  for (const RepoFile& f : files) fetch(hub, cache, name.repo, f);
  return paths_of(cache, name.repo, files);
}

}  // namespace nanoserve::hub
