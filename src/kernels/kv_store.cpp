// kv_store: one position of one KV head into a block's tiles, in the layout KvView describes.
#include <algorithm>
#include <cstring>

#include "kernels/activations.h"
#include "kernels/attention.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {

namespace {

void store_f16(uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v, int64_t head_dim,
               int64_t block_size) {
  constexpr int64_t kPiece = 64;  // key dimensions converted at once, then spread down the tile
  uint16_t k_half[kPiece];
  uint16_t* k_slot = reinterpret_cast<uint16_t*>(k_tile) + slot;  // dimension d at k_slot[d * block_size]
  for (int64_t d0 = 0; d0 < head_dim; d0 += kPiece) {
    const int64_t n = std::min(kPiece, head_dim - d0);
    f32_to_f16_row(k + d0, n, k_half);
    for (int64_t d = 0; d < n; ++d) k_slot[(d0 + d) * block_size] = k_half[d];
  }
  f32_to_f16_row(v, head_dim, reinterpret_cast<uint16_t*>(v_tile) + slot * head_dim);
}

void store_q8_0(uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v, int64_t head_dim,
                int64_t block_size) {
  constexpr int64_t kMaxBlocks = kKvQ8MaxHeadDim / kKvQ8Block;
  const int64_t n_blocks = head_dim / kKvQ8Block;
  int8_t levels[kKvQ8MaxHeadDim];
  uint8_t unsigned_levels[kKvQ8MaxHeadDim];
  float scales[kMaxBlocks], sums[kMaxBlocks];
  int32_t minus_128_sums[kMaxBlocks];
  quantize_q8_block32(k, head_dim, levels, scales, sums, unsigned_levels, minus_128_sums);
  for (int64_t d = 0; d < head_dim; d += 4)  // each four dimensions of the slot together
    std::memcpy(k_tile + kv_q8_key_byte(d, slot, block_size), unsigned_levels + d, 4);
  uint16_t* k_scales = kv_q8_scales(k_tile, head_dim, block_size) + slot;
  for (int64_t b = 0; b < n_blocks; ++b) k_scales[b * block_size] = tensor::f32_to_f16(scales[b]);
  quantize_q8_block32(v, head_dim, levels, scales, sums, unsigned_levels, minus_128_sums);
  for (int64_t i = 0; i < head_dim; ++i) v_tile[kv_q8_value_byte(i, slot, head_dim)] = static_cast<uint8_t>(levels[i]);
  uint16_t* v_scales = kv_q8_scales(v_tile, head_dim, block_size) + slot;
  for (int64_t b = 0; b < n_blocks; ++b) v_scales[b * block_size] = tensor::f32_to_f16(scales[b]);
}

}  // namespace

void kv_store(KvType type, uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v,
              int64_t head_dim, int64_t block_size) {
  if (type == KvType::F16) return store_f16(k_tile, v_tile, slot, k, v, head_dim, block_size);
  store_q8_0(k_tile, v_tile, slot, k, v, head_dim, block_size);
}

}  // namespace nanoserve::kernels
