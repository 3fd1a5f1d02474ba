#include "hub/model_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace nanoserve::hub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFileList = ".files.json";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Whether a repo folder still holds anything but its saved file list.
bool holds_files(const fs::path& repo_dir) {
  for (const auto& entry : fs::recursive_directory_iterator(repo_dir))
    if (entry.is_regular_file() && entry.path().filename() != kFileList) return true;
  return false;
}

}  // namespace

fs::path nanoserve_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "nanoserve";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "nanoserve";
  throw std::runtime_error("neither XDG_CACHE_HOME nor HOME is set, so nanoserve has no cache folder");
}

fs::path models_dir() { return nanoserve_cache_dir() / "models"; }

fs::path ModelCache::path_of(const std::string& repo, const std::string& file) const {
  const fs::path relative(file);
  // A file list comes from a server: none of its paths may lead out of the repo's folder.
  if (relative.is_absolute() || std::any_of(relative.begin(), relative.end(), [](const fs::path& part) {
        return part == ".." || part == ".";
      }))
    throw std::runtime_error("the Hub lists a file of " + repo + " at \"" + file +
                             "\", a path nanoserve does not store");
  return root_ / repo / relative;
}

bool ModelCache::has(const std::string& repo, const RepoFile& file) const {
  std::error_code ec;
  const fs::path path = path_of(repo, file.path);
  return fs::is_regular_file(path, ec) && fs::file_size(path, ec) == file.size;
}

std::optional<std::vector<RepoFile>> ModelCache::saved_file_list(const std::string& repo) const {
  std::ifstream in(root_ / repo / kFileList);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json saved = nlohmann::json::parse(in);
    std::vector<RepoFile> files;
    for (const nlohmann::json& f : saved.at("files"))
      files.push_back({f.at("path"), f.at("size"), f.at("sha256")});
    return files;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // damaged: the Hub is asked again
  }
}

void ModelCache::save_file_list(const std::string& repo, const std::vector<RepoFile>& files) const {
  nlohmann::json list = nlohmann::json::array();
  for (const RepoFile& f : files) list.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  const fs::path dir = root_ / repo;
  fs::create_directories(dir);
  // Written beside, then renamed: a concurrent reader sees the old list or the new one.
  const fs::path tmp = dir / fmt::format("{}.{}.tmp", kFileList, ::getpid());
  std::ofstream out(tmp);
  out << nlohmann::json{{"files", list}}.dump(1);
  out.close();
  if (!out) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
  fs::rename(tmp, dir / kFileList);
}

std::vector<CachedFile> ModelCache::files() const {
  std::vector<CachedFile> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  for (const auto& owner : fs::directory_iterator(root_)) {
    if (!owner.is_directory()) continue;
    for (const auto& repo_dir : fs::directory_iterator(owner.path())) {
      if (!repo_dir.is_directory()) continue;
      const std::string repo = owner.path().filename().string() + "/" + repo_dir.path().filename().string();
      for (const auto& entry : fs::recursive_directory_iterator(repo_dir.path())) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || name == kFileList || ends_with(name, ".tmp")) continue;
        CachedFile f{repo, fs::relative(entry.path(), repo_dir.path()).string(), entry.file_size(), ""};
        for (const auto& [suffix, state] : {std::pair{".part", "partial"}, std::pair{".corrupt", "corrupt"}})
          if (ends_with(f.file, suffix)) {
            f.file.resize(f.file.size() - std::strlen(suffix));
            f.state = state;
          }
        out.push_back(std::move(f));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const CachedFile& a, const CachedFile& b) {
    return std::tie(a.repo, a.file, a.state) < std::tie(b.repo, b.file, b.state);
  });
  return out;
}

std::vector<std::string> ModelCache::remove(const ModelName& name) const {
  std::vector<std::string> meant;
  if (const auto list = saved_file_list(name.repo)) {
    try {
      for (const RepoFile& f : select_files(*list, name)) meant.push_back(f.path);
    } catch (const std::runtime_error&) {
      // The name means nothing the last pull of this repo saw: nothing of it is here.
    }
  } else if (!name.file.empty()) {
    meant.push_back(name.file);
  }
  std::vector<std::string> removed;
  for (const std::string& file : meant) {
    const fs::path path = path_of(name.repo, file);
    bool any = false;
    for (const char* suffix : {"", ".part", ".corrupt"}) any |= fs::remove(path.string() + suffix);
    if (any) removed.push_back(file);
  }
  const fs::path repo_dir = root_ / name.repo;
  if (removed.empty()) {
    std::set<std::string> here;
    for (const CachedFile& f : files())
      if (f.repo == name.repo) here.insert(name.repo + "/" + f.file);
    throw std::runtime_error(
        here.empty() ? fmt::format("{} is not in the cache ({}): nothing of {} is (nanoserve list shows what is)",
                                   name.text(), root_.string(), name.repo)
                     : fmt::format("{} is not in the cache ({}); of {} it holds {}", name.text(), root_.string(),
                                   name.repo, fmt::join(here, ", ")));
  }
  if (!holds_files(repo_dir)) {
    fs::remove_all(repo_dir);
    std::error_code ec;
    fs::remove(repo_dir.parent_path(), ec);  // the owner's folder, when that was its last repo
  }
  return removed;
}

}  // namespace nanoserve::hub
