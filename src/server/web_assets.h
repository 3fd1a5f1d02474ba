// The chat page's and the lab pages' files (web/ at the top of the repository), built into the
// binary: the build turns each into a byte string (cmake/embed_files.cmake writes the definition
// of web_assets()).
#pragma once

#include <span>
#include <string_view>

namespace nanoserve::server {

struct WebAsset {
  std::string_view name;   // the file's path under web/, e.g. "chat.css", "lab/engine.html"
  std::string_view bytes;  // its content
};

std::span<const WebAsset> web_assets();

}  // namespace nanoserve::server
