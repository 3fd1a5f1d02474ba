#include "model/kv_cache.h"

#include <algorithm>
#include <string>

#include "tensor/fp16.h"

namespace nanoserve::model {

KvCache::KvCache(const ModelConfig& c, int64_t capacity, int n_seq, int64_t block_size)
    : n_layer_(static_cast<int>(c.n_layer)),
      n_head_kv_(c.n_head_kv),
      head_dim_(c.head_dim),
      block_size_(block_size),
      position_bytes_(kv_bytes_per_position(c)) {
  if (capacity <= 0 || n_seq <= 0 || block_size <= 0)
    throw std::invalid_argument("KV cache: capacity, sequences and block size must be positive");
  n_blocks_ = (capacity + block_size - 1) / block_size;
  if (n_blocks_ > INT32_MAX) throw std::invalid_argument("KV cache: too many blocks");
  sequences_.resize(n_seq);
  free_.reserve(n_blocks_);
  // Taken from the back: block 0 first, so a lone sequence fills the pool in address order.
  for (int64_t b = n_blocks_ - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
  // Whole groups of blocks (the last group's spare blocks are never given out, nor touched).
  const int64_t groups = (n_blocks_ + kBlocksPerGroup - 1) / kBlocksPerGroup;
  const size_t buffer_bytes = half_bytes(groups * kBlocksPerGroup);
  k_ = std::make_unique<kernels::HugePageBuffer>(buffer_bytes);
  v_ = std::make_unique<kernels::HugePageBuffer>(buffer_bytes);
}

bool KvCache::fits(const ModelConfig& c) const {
  return n_layer_ == static_cast<int>(c.n_layer) && n_head_kv_ == c.n_head_kv && head_dim_ == c.head_dim;
}

const KvCache::Sequence& KvCache::sequence(int seq) const {
  if (seq < 0 || seq >= n_seq()) throw std::out_of_range("KV cache: no sequence " + std::to_string(seq));
  return sequences_[seq];
}

int64_t KvCache::blocks_needed(int seq, int64_t n_positions) const {
  const int64_t want = (n_positions + block_size_ - 1) / block_size_;
  return std::max<int64_t>(0, want - blocks_of(seq));
}

bool KvCache::reserve(int seq, int64_t n_positions) {
  const int64_t need = blocks_needed(seq, n_positions);
  if (need > free_blocks()) return false;
  std::vector<int32_t>& table = sequences_[seq].blocks;
  for (int64_t i = 0; i < need; ++i) {
    table.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void KvCache::clear(int seq) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  // Given back in reverse, so the next reserve() takes them in the same order again.
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) free_.push_back(*it);
  s.blocks.clear();
  s.length = 0;
}

int64_t KvCache::tile_offset(int layer, int64_t kv_head, int64_t block) const {
  const int64_t group = block / kBlocksPerGroup;
  return (((group * n_layer_ + layer) * n_head_kv_ + kv_head) * kBlocksPerGroup + block % kBlocksPerGroup) *
         head_dim_ * block_size_;
}

void KvCache::store(int seq, int layer, int64_t pos, const float* k, const float* v) {
  const int64_t block = sequence(seq).blocks.at(static_cast<size_t>(pos / block_size_)), slot = pos % block_size_;
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const int64_t tile = tile_offset(layer, h, block);
    uint16_t* k_slot = k_data() + tile + slot;  // dimension d at k_slot[d * block_size]
    uint16_t* v_row = v_data() + tile + slot * head_dim_;
    for (int64_t d = 0; d < head_dim_; ++d) {
      k_slot[d * block_size_] = tensor::f32_to_f16(k[h * head_dim_ + d]);
      v_row[d] = tensor::f32_to_f16(v[h * head_dim_ + d]);
    }
  }
}

kernels::KvView KvCache::view(int seq, int layer) const {
  const int64_t layer_offset = tile_offset(layer, 0, 0);
  return {.k = k_data() + layer_offset,
          .v = v_data() + layer_offset,
          .blocks = sequence(seq).blocks.data(),
          .block_size = block_size_,
          .block_stride = tile_offset(0, 0, 1),
          .head_stride = tile_offset(0, 1, 0),
          .group_blocks = kBlocksPerGroup,
          .group_stride = tile_offset(0, 0, kBlocksPerGroup)};
}

void KvCache::set_length(int seq, int64_t n) {
  if (n < 0 || n > blocks_of(seq) * block_size_)
    throw std::out_of_range("KV cache: length " + std::to_string(n) + " beyond the blocks of sequence " +
                            std::to_string(seq));
  sequences_[seq].length = n;
}

}  // namespace nanoserve::model
