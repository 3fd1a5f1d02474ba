#include "gguf/types.h"

#include <array>
#include <cctype>
#include <stdexcept>

namespace nanoserve::gguf {
namespace {

using T = TensorType;
constexpr std::array kTypes = {
    TypeInfo{T::F32, "F32", 1, 4},         TypeInfo{T::F16, "F16", 1, 2},
    TypeInfo{T::Q4_0, "Q4_0", 32, 18},     TypeInfo{T::Q4_1, "Q4_1", 32, 20},
    TypeInfo{T::Q5_0, "Q5_0", 32, 22},     TypeInfo{T::Q5_1, "Q5_1", 32, 24},
    TypeInfo{T::Q8_0, "Q8_0", 32, 34},     TypeInfo{T::Q8_1, "Q8_1", 32, 36},
    TypeInfo{T::Q2_K, "Q2_K", 256, 84},    TypeInfo{T::Q3_K, "Q3_K", 256, 110},
    TypeInfo{T::Q4_K, "Q4_K", 256, 144},   TypeInfo{T::Q5_K, "Q5_K", 256, 176},
    TypeInfo{T::Q6_K, "Q6_K", 256, 210},   TypeInfo{T::Q8_K, "Q8_K", 256, 292},
    TypeInfo{T::IQ2_XXS, "IQ2_XXS", 256, 66}, TypeInfo{T::IQ2_XS, "IQ2_XS", 256, 74},
    TypeInfo{T::IQ3_XXS, "IQ3_XXS", 256, 98}, TypeInfo{T::IQ1_S, "IQ1_S", 256, 50},
    TypeInfo{T::IQ4_NL, "IQ4_NL", 32, 18},  TypeInfo{T::IQ3_S, "IQ3_S", 256, 110},
    TypeInfo{T::IQ2_S, "IQ2_S", 256, 82},   TypeInfo{T::IQ4_XS, "IQ4_XS", 256, 136},
    TypeInfo{T::I8, "I8", 1, 1},           TypeInfo{T::I16, "I16", 1, 2},
    TypeInfo{T::I32, "I32", 1, 4},         TypeInfo{T::I64, "I64", 1, 8},
    TypeInfo{T::F64, "F64", 1, 8},         TypeInfo{T::IQ1_M, "IQ1_M", 256, 56},
    TypeInfo{T::BF16, "BF16", 1, 2},       TypeInfo{T::TQ1_0, "TQ1_0", 256, 54},
    TypeInfo{T::TQ2_0, "TQ2_0", 256, 66},  TypeInfo{T::MXFP4, "MXFP4", 32, 17},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

const TypeInfo* type_info(uint32_t id) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == id) return &t;
  return nullptr;
}

const TypeInfo& type_info(TensorType type) {
  const TypeInfo* info = type_info(static_cast<uint32_t>(type));
  if (!info) throw std::invalid_argument("unknown tensor type id");
  return *info;
}

std::optional<TensorType> type_from_name(std::string_view name) {
  for (const auto& t : kTypes)
    if (iequals(t.name, name)) return t.type;
  return std::nullopt;
}

std::optional<uint64_t> row_bytes(TensorType type, uint64_t n) {
  const TypeInfo& info = type_info(type);
  if (n % info.block_elems != 0) return std::nullopt;
  return n / info.block_elems * info.block_bytes;
}

}  // namespace nanoserve::gguf
