// A model named as on the Hugging Face Hub, the way `nanoserve pull` and --model take it:
//   owner/repo              the repo's default quant (Q8_0 when it has one, else Q4_K_M)
//   owner/repo:Q4_K_M       the file(s) of that quant tag (matched case-insensitively)
//   owner/repo/path.gguf    that file
#pragma once

#include <optional>
#include <string>

namespace nanoserve::hub {

struct ModelName {
  std::string repo;   // "owner/repo"
  std::string quant;  // the tag after ':', or ""
  std::string file;   // the path inside the repo, or ""

  // As the user would write it again (messages, `nanoserve list`).
  std::string text() const;
};

// The name in `text`, or nullopt when `text` is a local path: a file that exists, or text that
// starts with '/', '.' or '~', or has no '/' at all. Throws std::invalid_argument, saying what a
// name looks like, for text that is neither (e.g. "owner/repo:" or "a/b/c" without ".gguf").
std::optional<ModelName> parse_model_name(const std::string& text);

}  // namespace nanoserve::hub
