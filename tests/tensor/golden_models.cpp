#include "tensor/golden_models.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "support/test_paths.h"

namespace nanoserve::test {

std::string golden_model_path(const std::string& file) { return shared_path("golden/models/" + file); }

const std::vector<std::string>& expected_golden_models() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> v;
    for (const char* t : {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_M", "Q5_K_M", "Q6_K",
                          "Q2_K", "Q3_K_M"})
      v.push_back(std::string("tiny-qwen3-") + t + ".gguf");
    for (const char* family : {"qwen2", "llama"})
      for (const char* t : {"F16", "Q8_0", "Q4_K_M"}) v.push_back(std::string("tiny-") + family + "-" + t + ".gguf");
    std::sort(v.begin(), v.end());
    return v;
  }();
  return files;
}

std::vector<std::string> golden_model_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(shared_path("golden/models"))) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("tiny-") && name.ends_with(".gguf")) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string golden_family(const std::string& file) {
  const size_t start = file.find('-') + 1;
  return file.substr(start, file.find('-', start) - start);
}

std::string golden_reference_file(const std::string& family) {
  const std::string master = "tiny-" + family + "-F32.gguf";
  if (std::filesystem::exists(shared_path("golden/models") + "/" + master)) return master;
  return "tiny-" + family + "-F16.gguf";
}

std::string test_name_of(const std::string& file) {
  std::string name = file.substr(0, file.size() - std::string(".gguf").size());
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace nanoserve::test
