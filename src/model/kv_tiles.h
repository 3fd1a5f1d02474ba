// Where the keys and values of some layers live in a pool of blocks: the memory and its layout,
// without the bookkeeping of who holds which block (KvCache and KvWindow do that).
//
// A block holds block_size positions of each of its layers and KV heads, as tiles (block_size
// positions × head_dim in the cache's type, F16 or Q8_0, laid out as kernels::KvView says: keys
// transposed, values in rows; a Q8_0 tile's scales after its levels).
// Blocks go in groups of group_blocks; in a group, per layer and KV head, the tiles of its blocks
// in a run, so that a sequence whose blocks were taken in order has each head's keys of a layer
// in runs the hardware prefetchers follow. Groups rather than one run per head for the whole
// pool: the pool's memory becomes resident as groups are first written, so a large pool in light
// use stays small. The groups are evened out (as few as kMaxGroupBlocks allows, of equal size):
// a last group with spare blocks would be in memory whole once its first block is written (huge
// pages span several heads' runs). Measured: experiments/kernel-notes.md.
//
// The memory is left uninitialized for that reason (a vector would zero, and so touch, all of
// it up front); nothing reads a position before the forward pass writes it. In huge pages where
// the kernel allows: with 4 KiB pages a head's jump to another block costs a TLB walk.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/attention.h"
#include "kernels/huge_pages.h"

namespace nanoserve::model {

class KvTiles {
 public:
  // Smaller groups slow attention, larger ones make more of a lightly used pool resident;
  // chosen by measurement (experiments/kernel-notes.md).
  static constexpr int64_t kMaxGroupBlocks = 64;

  KvTiles(int n_layer, int64_t n_head_kv, int64_t head_dim, int64_t block_size, int64_t n_blocks,
          kernels::KvType type = kernels::KvType::F16);

  int n_layer() const { return n_layer_; }
  kernels::KvType type() const { return type_; }
  // Bytes of one block's keys and values, and of the whole pool's.
  size_t block_bytes() const { return 2 * tile_bytes() * static_cast<size_t>(n_layer_ * n_head_kv_); }
  size_t bytes() const { return block_bytes() * static_cast<size_t>(n_blocks_); }

  // Stores keys and values (n_head_kv × head_dim each, rounded to F16 or quantized to Q8_0) at
  // `slot` of `block` in `layer`. Distinct slots may be stored from different threads at once.
  void store(int layer, int32_t block, int64_t slot, const float* k, const float* v);
  // Layer `layer` of a sequence whose block table is `blocks` (kernels::KvView).
  kernels::KvView view(int layer, const int32_t* blocks) const;
  void copy_block(int32_t from, int32_t to);
  // A block's keys and values as block_bytes() bytes, and back.
  void read_block(int32_t block, std::span<uint8_t> out) const;
  void write_block(int32_t block, std::span<const uint8_t> in);

 private:
  size_t tile_bytes() const { return static_cast<size_t>(kernels::kv_tile_bytes(type_, head_dim_, block_size_)); }
  // Where KV head kv_head's tile of `layer` in block `block` starts, in bytes.
  int64_t tile_offset(int layer, int64_t kv_head, int64_t block) const;
  // Calls f(k_tile, v_tile) for each layer and KV head of `block`, in that order.
  template <class F>
  void for_each_tile(int32_t block, F f) const;
  uint8_t* k_data() const { return reinterpret_cast<uint8_t*>(k_->data()); }
  uint8_t* v_data() const { return reinterpret_cast<uint8_t*>(v_->data()); }

  int n_layer_;
  int64_t n_head_kv_, head_dim_, block_size_, n_blocks_;
  kernels::KvType type_;
  int64_t group_blocks_;  // blocks per group (see the top of this file)
  std::unique_ptr<kernels::HugePageBuffer> k_, v_;
};

}  // namespace nanoserve::model
