// The GGUF/ggml tensor type table: type ids as stored in a file, and the block
// geometry needed to size a tensor. The math of each type lives in src/tensor/.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nanoserve::gguf {

// Values are the on-disk ids (ggml_type). Ids that ggml retired (4, 5) are absent.
enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21,
  IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
  IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TypeInfo {
  TensorType type;
  std::string_view name;   // as llama.cpp prints it: "Q4_K", "BF16", ...
  uint32_t block_elems;    // elements per block (1 for plain types)
  uint32_t block_bytes;    // bytes per block
};

// nullptr when the id is not a known type.
const TypeInfo* type_info(uint32_t id);
const TypeInfo& type_info(TensorType type);
std::optional<TensorType> type_from_name(std::string_view name);  // case-insensitive
inline std::string_view type_name(TensorType t) { return type_info(t).name; }

// Bytes of one row of n elements; nullopt when n is not a multiple of the block size.
std::optional<uint64_t> row_bytes(TensorType type, uint64_t n);

}  // namespace nanoserve::gguf
