// The files of experiments/, built into the binary (cmake/embed_files.cmake writes the
// definition when the build runs), so an installed nanoserve needs no files beside it.
#pragma once

#include <span>
#include <string_view>

namespace nanoserve::lab {

struct EmbeddedFile {
  std::string_view name;  // "ttft-4k.json"
  std::string_view text;
};

std::span<const EmbeddedFile> embedded_experiments();

}  // namespace nanoserve::lab
