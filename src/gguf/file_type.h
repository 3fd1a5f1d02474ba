// general.file_type: llama.cpp's name for the mix of weight types a file was quantized to.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nanoserve::gguf {

struct FileType {
  uint32_t id;
  std::string_view name;  // "Q4_K_M", "F16", ...
};

std::optional<FileType> file_type_by_id(uint32_t id);
std::optional<FileType> file_type_by_name(std::string_view name);  // case-insensitive

}  // namespace nanoserve::gguf
