// The types a KV cache stores keys and values in, and the size of a tile of them (KvView says
// how a tile is laid out).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nanoserve::kernels {

// How the cache stores a key or value: F16, or Q8_0 (blocks of 32 of a position's head_dim
// values as signed levels, with one F16 scale each: value = scale * level; quantized when
// stored, as ggml's quantize_row_q8_0 does). Q8_0 needs head_dim a multiple of 32.
enum class KvType { F16, Q8_0 };
inline constexpr int64_t kKvQ8Block = 32;
// The largest head a Q8_0 cache takes: a head's key, value or query is quantized on the stack.
inline constexpr int64_t kKvQ8MaxHeadDim = 512;
// Slots of a block whose weights share one scale when a Q8_0 cache's values are summed
// (attention_heads): [0, 16), [16, 32), ... of each block.
inline constexpr int64_t kKvQ8Chunk = 16;

// Bytes of a Q8_0 tile's levels: head_dim a slot, its slots rounded up to a multiple of four
// (a value tile holds four slots' levels of a dimension together: KvView).
inline int64_t kv_q8_level_bytes(int64_t head_dim, int64_t block_size) { return head_dim * ((block_size + 3) / 4 * 4); }

// Bytes one position takes in a KV head's keys (or values): its F16 values, or its Q8_0 levels
// and a scale per block of 32 (a tile of block_size positions takes block_size times as many,
// where block_size is a multiple of four: kv_tile_bytes).
inline int64_t kv_position_bytes(KvType type, int64_t head_dim) {
  return type == KvType::F16 ? 2 * head_dim : head_dim + head_dim / kKvQ8Block * 2;
}

// Bytes of one KV head's tile of keys (or values) for block_size positions.
inline int64_t kv_tile_bytes(KvType type, int64_t head_dim, int64_t block_size) {
  if (type == KvType::F16) return 2 * head_dim * block_size;
  return kv_q8_level_bytes(head_dim, block_size) + head_dim / kKvQ8Block * block_size * 2;  // levels, then F16 scales
}

// "f16" and "q8_0", as the --kv-type flag and llama.cpp's -ctk/-ctv name them.
inline const char* kv_type_name(KvType type) { return type == KvType::F16 ? "f16" : "q8_0"; }
inline KvType parse_kv_type(std::string_view name) {
  if (name == "f16") return KvType::F16;
  if (name == "q8_0") return KvType::Q8_0;
  throw std::invalid_argument("unknown KV cache type '" + std::string(name) + "' (f16 or q8_0)");
}
// The same, where "" leaves the choice to the default (ModelOptions::kv_type unset).
inline std::optional<KvType> parse_optional_kv_type(std::string_view name) {
  if (name.empty()) return std::nullopt;
  return parse_kv_type(name);
}

}  // namespace nanoserve::kernels
