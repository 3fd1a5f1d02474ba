#include "hub/model_name.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

namespace nanoserve::hub {
namespace {

bool ends_with_gguf(const std::string& s) {
  if (s.size() < 5) return false;
  std::string tail = s.substr(s.size() - 5);
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return tail == ".gguf";
}

// The characters the Hub allows in owner and repo names (and that quant tags use).
bool is_name_part(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

[[noreturn]] void refuse(const std::string& text, const std::string& why) {
  throw std::invalid_argument(text + ": " + why +
                              ". A model name is owner/repo, owner/repo:QUANT (e.g. "
                              "Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M) or owner/repo/FILE.gguf; a local file is "
                              "a path to a .gguf file");
}

}  // namespace

std::string ModelName::text() const {
  if (!file.empty()) return repo + "/" + file;
  return quant.empty() ? repo : repo + ":" + quant;
}

std::optional<ModelName> parse_model_name(const std::string& text) {
  if (text.empty() || text[0] == '/' || text[0] == '.' || text[0] == '~') return std::nullopt;
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::error_code ec;
  if (std::filesystem::exists(text, ec)) return std::nullopt;

  ModelName name;
  const size_t second_slash = text.find('/', slash + 1);
  if (second_slash == std::string::npos) {
    if (ends_with_gguf(text)) return std::nullopt;  // dir/model.gguf: a relative path
    const size_t colon = text.find(':');
    name.repo = text.substr(0, colon);
    if (colon != std::string::npos) {
      name.quant = text.substr(colon + 1);
      if (!is_name_part(name.quant)) refuse(text, "the quant tag after ':' is empty or has characters a tag has not");
    }
  } else {
    name.repo = text.substr(0, second_slash);
    name.file = text.substr(second_slash + 1);
    if (!ends_with_gguf(name.file)) refuse(text, "not a local file, and a file of a repo must end in .gguf");
    if (name.file.find(':') != std::string::npos || name.file.find("..") != std::string::npos ||
        name.file.find("//") != std::string::npos)
      refuse(text, "the file's path in the repo is not one the Hub has");
  }
  if (!is_name_part(name.repo.substr(0, slash)) || !is_name_part(name.repo.substr(slash + 1)))
    refuse(text, "not a local file, and \"" + name.repo + "\" is not an owner/repo name");
  return name;
}

}  // namespace nanoserve::hub
