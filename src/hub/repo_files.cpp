#include "hub/repo_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

namespace nanoserve::hub {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

bool is_gguf(const std::string& path) { return path.size() > 5 && lower(path.substr(path.size() - 5)) == ".gguf"; }

// llama.cpp's gguf-split names: NAME-00001-of-00003.gguf.
const std::regex& split_suffix() {
  static const std::regex re(R"(-(\d{5})-of-(\d{5})\.gguf$)", std::regex::icase);
  return re;
}

// The path without its multi-part suffix: the same for every part of one model.
std::string model_key(const std::string& path) { return std::regex_replace(path, split_suffix(), ".gguf"); }

// The file name without folder, multi-part suffix and ".gguf", lower-cased.
std::string stem(const std::string& path) {
  std::string key = model_key(path);
  key = key.substr(key.rfind('/') + 1);
  return lower(key.substr(0, key.size() - 5));
}

bool has_quant(const std::string& path, const std::string& tag) {
  const std::string s = stem(path), t = lower(tag);
  if (s == t) return true;
  return s.size() > t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0 &&
         (s[s.size() - t.size() - 1] == '-' || s[s.size() - t.size() - 1] == '.');
}

std::vector<std::string> quants_of(const std::vector<RepoFile>& files) {
  std::set<std::string> quants;
  for (const RepoFile& f : files) quants.insert(quant_of(f.path));
  return {quants.begin(), quants.end()};
}

// Every part of the model whose key is `key`, in order; throws when the repo lacks some.
std::vector<RepoFile> model_files(const std::vector<RepoFile>& files, const std::string& key, const std::string& repo) {
  std::vector<RepoFile> parts;
  for (const RepoFile& f : files)
    if (model_key(f.path) == key) parts.push_back(f);
  std::sort(parts.begin(), parts.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  std::smatch m;
  if (std::regex_search(parts.front().path, m, split_suffix()) && std::stoul(m[2]) != parts.size())
    throw std::runtime_error(fmt::format("{} lists {} of the {} parts of {}: the repo is incomplete", repo,
                                         parts.size(), std::stoul(m[2]), key));
  return parts;
}

// The one model among the files `matches` accepts, or nullopt when none; throws when several.
std::optional<std::vector<RepoFile>> only_model(const std::vector<RepoFile>& files, const std::string& repo,
                                                const std::string& what, auto matches) {
  std::set<std::string> keys;
  for (const RepoFile& f : files)
    if (matches(f.path)) keys.insert(model_key(f.path));
  if (keys.empty()) return std::nullopt;
  if (keys.size() > 1) {
    std::vector<std::string> names;
    for (const std::string& k : keys) names.push_back(repo + "/" + k);
    throw std::runtime_error(
        fmt::format("{} has several {} files; name the one to use: {}", repo, what, fmt::join(names, ", ")));
  }
  return model_files(files, *keys.begin(), repo);
}

}  // namespace

std::string quant_of(const std::string& path) {
  const std::string s = stem(path);
  const size_t cut = s.find_last_of("-.");
  return upper(cut == std::string::npos ? s : s.substr(cut + 1));
}

std::vector<RepoFile> select_files(const std::vector<RepoFile>& all, const ModelName& name) {
  std::vector<RepoFile> files;
  std::copy_if(all.begin(), all.end(), std::back_inserter(files), [](const RepoFile& f) { return is_gguf(f.path); });
  if (files.empty()) throw std::runtime_error(name.repo + " has no .gguf file: nanoserve loads GGUF models only");
  const std::string quants = fmt::format("{}", fmt::join(quants_of(files), ", "));

  if (!name.file.empty()) {
    const auto it = std::find_if(files.begin(), files.end(), [&](const RepoFile& f) { return f.path == name.file; });
    if (it == files.end())
      throw std::runtime_error(fmt::format("{} has no file {}; its quants: {} (pull one with {}:QUANT)", name.repo,
                                           name.file, quants, name.repo));
    return model_files(files, model_key(name.file), name.repo);
  }
  if (!name.quant.empty()) {
    auto chosen = only_model(files, name.repo, upper(name.quant), [&](const std::string& p) {
      return has_quant(p, name.quant);
    });
    if (!chosen)
      throw std::runtime_error(fmt::format("{} has no {} file; its quants: {}", name.repo, name.quant, quants));
    return *chosen;
  }
  for (const char* quant : kDefaultQuants)
    if (auto chosen = only_model(files, name.repo, quant, [&](const std::string& p) { return has_quant(p, quant); }))
      return *chosen;
  throw std::runtime_error(fmt::format("{} has no {} file to choose by default; name a quant, e.g. {}:{} (its "
                                       "quants: {})",
                                       name.repo, fmt::join(kDefaultQuants, " or "), name.repo,
                                       quants_of(files).front(), quants));
}

}  // namespace nanoserve::hub
