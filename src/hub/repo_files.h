// Which of a repo's files a model name means: a quant tag's file, the default quant, or a named
// file, each with the other parts of a multi-part GGUF (NAME-00001-of-00003.gguf ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hub/model_name.h"

namespace nanoserve::hub {

// One file of a repo as the Hub lists it.
struct RepoFile {
  std::string path;    // inside the repo, e.g. "qwen2.5-0.5b-instruct-q8_0.gguf"
  uint64_t size = 0;   // bytes
  std::string sha256;  // hex, from its LFS pointer; "" for a file stored in git itself
};

// The quants nanoserve pulls when a name gives none, best first.
inline constexpr const char* kDefaultQuants[] = {"Q8_0", "Q4_K_M"};

// The quant tag of a .gguf path: the file name's last '-' or '.' separated part, upper-cased
// ("qwen2.5-0.5b-instruct-q4_k_m.gguf" -> "Q4_K_M"), the multi-part suffix left out.
std::string quant_of(const std::string& path);

// The .gguf files of `files` that `name` means, a multi-part model's parts in order. Throws
// std::runtime_error saying what the repo has (its quants, or the names to choose between) when
// it means none, or more than one model.
std::vector<RepoFile> select_files(const std::vector<RepoFile>& files, const ModelName& name);

}  // namespace nanoserve::hub
