#include "model/kv_tiles.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>


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
  if (type_ == kernels::KvType::Q8_0 && head_dim_ > kernels::kKvQ8MaxHeadDim)
    throw std::invalid_argument("KV cache: a q8_0 cache takes head dimensions up to " + std::to_string(kernels::kKvQ8MaxHeadDim));
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
    kernels::kv_store(type_, k_data() + tile, v_data() + tile, slot, k + h * head_dim_, v + h * head_dim_, head_dim_,
                      block_size_);
  }
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
