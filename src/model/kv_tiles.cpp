#include "model/kv_tiles.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/activations.h"
#include "tensor/fp16.h"

namespace nanoserve::model {

KvTiles::KvTiles(int n_layer, int64_t n_head_kv, int64_t head_dim, int64_t block_size, int64_t n_blocks,
                 kernels::KvType type)
    : n_layer_(n_layer),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      block_size_(block_size),
      n_blocks_(n_blocks),
      type_(type) {
  if (type_ == kernels::KvType::Q8_0 && head_dim_ % kernels::kKvQ8Block != 0)
    throw std::invalid_argument("KV cache: a q8_0 cache needs a head dimension that is a multiple of 32, not " +
                                std::to_string(head_dim_));
  if (type_ == kernels::KvType::Q8_0 && head_dim_ > kMaxQ8HeadDim)
    throw std::invalid_argument("KV cache: a q8_0 cache takes head dimensions up to " + std::to_string(kMaxQ8HeadDim));
  const int64_t groups = (n_blocks_ + kMaxGroupBlocks - 1) / kMaxGroupBlocks;
  group_blocks_ = (n_blocks_ + groups - 1) / groups;
  // mmap takes no empty mapping: a pool of no layers (every layer elsewhere) still maps a byte.
  const size_t half = std::max<size_t>(1, static_cast<size_t>(groups * group_blocks_) * block_bytes() / 2);
  k_ = std::make_unique<kernels::HugePageBuffer>(half);
  v_ = std::make_unique<kernels::HugePageBuffer>(half);
}

int64_t KvTiles::tile_offset(int layer, int64_t kv_head, int64_t block) const {
  const int64_t group = block / group_blocks_;
  return (((group * n_layer_ + layer) * n_head_kv_ + kv_head) * group_blocks_ + block % group_blocks_) *
         static_cast<int64_t>(tile_bytes());
}

template <class F>
void KvTiles::for_each_tile(int32_t block, F f) const {
  for (int layer = 0; layer < n_layer_; ++layer)
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      const int64_t tile = tile_offset(layer, h, block);
      f(k_data() + tile, v_data() + tile);
    }
}

void KvTiles::store(int layer, int32_t block, int64_t slot, const float* k, const float* v) {
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const int64_t tile = tile_offset(layer, h, block);
    if (type_ == kernels::KvType::F16) {
      store_f16(k_data() + tile, v_data() + tile, slot, k + h * head_dim_, v + h * head_dim_);
    } else {
      store_q8_0(k_data() + tile, v_data() + tile, slot, k + h * head_dim_, v + h * head_dim_);
    }
  }
}

void KvTiles::store_f16(uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v) const {
  constexpr int64_t kPiece = 64;  // key dimensions converted at once, then spread down the tile
  uint16_t k_half[kPiece];
  uint16_t* k_slot = reinterpret_cast<uint16_t*>(k_tile) + slot;  // dimension d at k_slot[d * block_size]
  for (int64_t d0 = 0; d0 < head_dim_; d0 += kPiece) {
    const int64_t n = std::min(kPiece, head_dim_ - d0);
    kernels::f32_to_f16_row(k + d0, n, k_half);
    for (int64_t d = 0; d < n; ++d) k_slot[(d0 + d) * block_size_] = k_half[d];
  }
  kernels::f32_to_f16_row(v, head_dim_, reinterpret_cast<uint16_t*>(v_tile) + slot * head_dim_);
}

// Quantized as llama.cpp's CPU backend stores a q8_0 cache (its x86 quantize_row_q8_0, which
// kernels::quantize_q8_block32 reproduces), then spread into the tiles.
void KvTiles::store_q8_0(uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v) const {
  constexpr int kMaxBlocks = kMaxQ8HeadDim / kernels::kKvQ8Block;
  const int64_t n_blocks = head_dim_ / kernels::kKvQ8Block;
  int8_t levels[kMaxQ8HeadDim];
  uint8_t unsigned_levels[kMaxQ8HeadDim];
  float scales[kMaxBlocks], sums[kMaxBlocks];
  int32_t minus_128_sums[kMaxBlocks];
  kernels::quantize_q8_block32(k, head_dim_, levels, scales, sums, unsigned_levels, minus_128_sums);
  auto* k_levels = reinterpret_cast<int8_t*>(k_tile) + slot;  // dimension d at k_levels[d * block_size]
  uint16_t* k_scales = kernels::kv_q8_scales(k_tile, head_dim_, block_size_) + slot;
  for (int64_t d = 0; d < head_dim_; ++d) k_levels[d * block_size_] = levels[d];
  for (int64_t b = 0; b < n_blocks; ++b) k_scales[b * block_size_] = tensor::f32_to_f16(scales[b]);
  kernels::quantize_q8_block32(v, head_dim_, levels, scales, sums, unsigned_levels, minus_128_sums);
  std::memcpy(v_tile + slot * head_dim_, levels, static_cast<size_t>(head_dim_));
  uint16_t* v_scales = kernels::kv_q8_scales(v_tile, head_dim_, block_size_) + slot * n_blocks;
  for (int64_t b = 0; b < n_blocks; ++b) v_scales[b] = tensor::f32_to_f16(scales[b]);
}

kernels::KvView KvTiles::view(int layer, const int32_t* blocks) const {
  const int64_t layer_offset = tile_offset(layer, 0, 0);
  return {.k = k_data() + layer_offset,
          .v = v_data() + layer_offset,
          .blocks = blocks,
          .block_size = block_size_,
          .block_stride = tile_offset(0, 0, 1),
          .head_stride = tile_offset(0, 1, 0),
          .group_blocks = group_blocks_,
          .group_stride = tile_offset(0, 0, group_blocks_),
          .type = type_};
}

void KvTiles::copy_block(int32_t from, int32_t to) {
  // Keys are transposed in a tile (dimension d of every slot together): whole tiles are copied;
  // the positions past those a sequence attached are written before anything reads them.
  const int64_t shift = tile_offset(0, 0, to) - tile_offset(0, 0, from);  // the same in every layer and head
  const size_t bytes = tile_bytes();
  for_each_tile(from, [&](uint8_t* k, uint8_t* v) {
    std::memcpy(k + shift, k, bytes);
    std::memcpy(v + shift, v, bytes);
  });
}

void KvTiles::read_block(int32_t block, std::span<uint8_t> out) const {
  if (out.size() != block_bytes()) throw std::invalid_argument("KV cache: read_block needs block_bytes() bytes");
  const size_t bytes = tile_bytes();
  uint8_t* at = out.data();
  for_each_tile(block, [&](const uint8_t* k, const uint8_t* v) {
    std::memcpy(at, k, bytes);
    std::memcpy(at + bytes, v, bytes);
    at += 2 * bytes;
  });
}

void KvTiles::write_block(int32_t block, std::span<const uint8_t> in) {
  if (in.size() != block_bytes()) throw std::invalid_argument("KV cache: a block takes block_bytes() bytes");
  const size_t bytes = tile_bytes();
  const uint8_t* at = in.data();
  for_each_tile(block, [&](uint8_t* k, uint8_t* v) {
    std::memcpy(k, at, bytes);
    std::memcpy(v, at + bytes, bytes);
    at += 2 * bytes;
  });
}

}  // namespace nanoserve::model
