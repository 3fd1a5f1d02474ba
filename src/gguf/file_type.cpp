#include "gguf/file_type.h"

#include <array>
#include <cctype>

namespace nanoserve::gguf {
namespace {

// Ids of llama.cpp's llama_ftype for the file types nanoserve reads and writes.
constexpr std::array kFileTypes = {
    FileType{0, "F32"},     FileType{1, "F16"},     FileType{2, "Q4_0"},    FileType{3, "Q4_1"},
    FileType{7, "Q8_0"},    FileType{8, "Q5_0"},    FileType{9, "Q5_1"},    FileType{10, "Q2_K"},
    FileType{11, "Q3_K_S"}, FileType{12, "Q3_K_M"}, FileType{13, "Q3_K_L"}, FileType{14, "Q4_K_S"},
    FileType{15, "Q4_K_M"}, FileType{16, "Q5_K_S"}, FileType{17, "Q5_K_M"}, FileType{18, "Q6_K"},
    FileType{25, "IQ4_NL"}, FileType{30, "IQ4_XS"}, FileType{32, "BF16"},   FileType{38, "MXFP4_MOE"},
};

}  // namespace

std::optional<FileType> file_type_by_id(uint32_t id) {
  for (const auto& f : kFileTypes)
    if (f.id == id) return f;
  return std::nullopt;
}

std::optional<FileType> file_type_by_name(std::string_view name) {
  for (const auto& f : kFileTypes) {
    if (f.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::toupper(static_cast<unsigned char>(name[i])) == f.name[i];
    if (same) return f;
  }
  return std::nullopt;
}

}  // namespace nanoserve::gguf
