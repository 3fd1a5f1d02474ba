#include "model/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/activations.h"

namespace nanoserve::model {

namespace {

// ceil(capacity / block_size), after checking the constructor's arguments.
int64_t pool_blocks(int64_t capacity, int n_seq, int64_t block_size) {
  if (capacity <= 0 || n_seq <= 0 || block_size <= 0)
    throw std::invalid_argument("KV cache: capacity, sequences and block size must be positive");
  const int64_t blocks = (capacity + block_size - 1) / block_size;
  if (blocks > INT32_MAX) throw std::invalid_argument("KV cache: too many blocks");
  return blocks;
}

}  // namespace

KvCache::KvCache(const ModelConfig& c, int64_t capacity, int n_seq, int64_t block_size, PrefixIndex::HashFn hash)
    : n_layer_(static_cast<int>(c.n_layer)),
      n_head_kv_(c.n_head_kv),
      head_dim_(c.head_dim),
      block_size_(block_size),
      n_blocks_(pool_blocks(capacity, n_seq, block_size)),
      position_bytes_(kv_bytes_per_position(c)),
      refs_(static_cast<size_t>(n_blocks_), 0),
      index_(n_blocks_, block_size, hash),
      idle_at_(static_cast<size_t>(n_blocks_)) {
  sequences_.resize(n_seq);
  free_.reserve(n_blocks_);
  // Taken from the back: block 0 first, so a lone sequence fills the pool in address order.
  for (int64_t b = n_blocks_ - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
  // As few groups as kBlocksPerGroup allows, evened out: a last group with spare blocks would be
  // in memory whole once its first block is written (huge pages span several heads' runs): 85
  // MiB of Qwen3-30B-A3B's 4k-token pool of 257 blocks in groups of 64; in 5 groups of 52, 3 blocks.
  const int64_t groups = (n_blocks_ + kBlocksPerGroup - 1) / kBlocksPerGroup;
  group_blocks_ = (n_blocks_ + groups - 1) / groups;
  const size_t buffer_bytes = half_bytes(groups * group_blocks_);
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
  for (int64_t i = 0; i < need; ++i) sequences_[seq].blocks.push_back(take_block());
  return true;
}

void KvCache::clear(int seq) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  // Let go of in reverse: the free list then gives them out in the same order again, and a
  // cached prefix's last blocks become the least recently used (evicted before its first ones,
  // which more prompts share).
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) let_go(*it);
  s = Sequence{};
}

void KvCache::truncate(int seq, int64_t n) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (n > s.length || n < s.published * block_size_)
    throw std::out_of_range("KV cache: cannot truncate sequence " + std::to_string(seq) + " of length " +
                            std::to_string(s.length) + " (" + std::to_string(s.published) +
                            " published blocks) to " + std::to_string(n));
  s.length = n;
  const auto keep = static_cast<size_t>((n + block_size_ - 1) / block_size_);
  while (s.blocks.size() > keep) {
    let_go(s.blocks.back());
    s.blocks.pop_back();
  }
}

int32_t KvCache::take_block() {
  int32_t block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else {
    if (idle_.empty()) throw std::logic_error("KV cache: no block to take");
    block = idle_.front();
    idle_.pop_front();
    index_.forget(block);
    ++evictions_;
  }
  refs_[static_cast<size_t>(block)] = 1;
  return block;
}

void KvCache::hold(int32_t block) {
  if (refs_[static_cast<size_t>(block)]++ == 0) idle_.erase(idle_at_[static_cast<size_t>(block)]);
}

void KvCache::let_go(int32_t block) {
  if (--refs_[static_cast<size_t>(block)] > 0) return;
  if (index_.published(block)) {
    idle_at_[static_cast<size_t>(block)] = idle_.insert(idle_.end(), block);
  } else {
    free_.push_back(block);
  }
}

KvCache::PrefixHit KvCache::find_prefix(std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                                        int64_t limit) const {
  PrefixHit hit;
  hit.blocks = index_.match(tokens, hashes);
  const auto matched = static_cast<int64_t>(hit.blocks.size()) * block_size_;
  limit = std::max<int64_t>(0, std::min(limit, static_cast<int64_t>(tokens.size())));
  if (limit < matched) {  // the limit ends inside the matched blocks: the last one is copied
    const auto whole = static_cast<size_t>(limit / block_size_);
    if (limit % block_size_ != 0) hit.copied = hit.blocks[whole];
    hit.blocks.resize(whole);
    hit.positions = limit;
  } else {
    hit.positions = matched;
    // The tokens past the whole blocks may begin a cached block that followed the last one
    // (the previous turn's answer, the same prompt sent before): its first positions are copied.
    if (!hit.blocks.empty() && matched < limit) {
      const auto [child, agree] = index_.longest_child(hit.blocks.back(), tokens.subspan(static_cast<size_t>(matched)));
      const int64_t used = std::min(agree, limit - matched);
      if (used > 0) {
        hit.copied = child;
        hit.positions += used;
      }
    }
  }
  for (int32_t b : hit.blocks) hit.pool_cost += refs_[static_cast<size_t>(b)] == 0 ? 1 : 0;
  if (hit.copied >= 0) hit.pool_cost += 1;
  return hit;
}

void KvCache::attach(int seq, const PrefixHit& hit) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (!s.blocks.empty()) throw std::logic_error("KV cache: a prefix is attached to an empty sequence only");
  if (hit.pool_cost > free_blocks()) throw std::logic_error("KV cache: too few free blocks to attach the prefix");
  for (int32_t b : hit.blocks) {
    hold(b);
    s.blocks.push_back(b);
  }
  s.published = static_cast<int64_t>(hit.blocks.size());
  s.chain = hit.blocks.empty() ? -1 : hit.blocks.back();
  if (hit.copied >= 0) {
    // When the pool has only idle blocks left, the one taken may be the copied block itself
    // (evicted, so now our own): its keys and values are still in place.
    const int32_t own = take_block();
    if (own != hit.copied) copy_block(hit.copied, own);
    s.blocks.push_back(own);
  }
  s.length = hit.positions;
}

void KvCache::publish(int seq, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  const int64_t whole = std::min<int64_t>(s.length, static_cast<int64_t>(tokens.size())) / block_size_;
  for (int64_t i = s.published; s.publishing && i < whole && i < static_cast<int64_t>(hashes.size()); ++i) {
    const auto first = static_cast<size_t>(i * block_size_);
    const int32_t stands = index_.publish(s.blocks[static_cast<size_t>(i)], s.chain, hashes[static_cast<size_t>(i)],
                                          tokens.subspan(first, static_cast<size_t>(block_size_)));
    if (stands < 0) {
      s.publishing = false;
    } else {
      s.chain = stands;
      s.published = i + 1;
    }
  }
}

int64_t KvCache::shared_blocks(int seq) const {
  int64_t shared = 0;
  for (int32_t b : sequence(seq).blocks) shared += refs_[static_cast<size_t>(b)] > 1 ? 1 : 0;
  return shared;
}

void KvCache::drop_cached() {
  for (int32_t block : idle_) {
    index_.forget(block);
    free_.push_back(block);
  }
  idle_.clear();
}

template <class F>
void KvCache::for_each_tile(int32_t block, F f) const {
  for (int layer = 0; layer < n_layer_; ++layer)
    for (int64_t h = 0; h < n_head_kv_; ++h) {
      const int64_t tile = tile_offset(layer, h, block);
      f(k_data() + tile, v_data() + tile);
    }
}

size_t KvCache::tile_bytes() const { return static_cast<size_t>(head_dim_ * block_size_) * sizeof(uint16_t); }

void KvCache::copy_block(int32_t from, int32_t to) {
  // Keys are transposed in a tile (dimension d of every slot together): whole tiles are copied;
  // the positions past those attached are written before anything reads them.
  const int64_t shift = tile_offset(0, 0, to) - tile_offset(0, 0, from);  // the same in every layer and head
  const size_t bytes = tile_bytes();
  for_each_tile(from, [&](uint16_t* k, uint16_t* v) {
    std::memcpy(k + shift, k, bytes);
    std::memcpy(v + shift, v, bytes);
  });
}

void KvCache::read_block(int seq, int64_t index, std::span<uint8_t> out) const {
  if (out.size() != block_bytes()) throw std::invalid_argument("KV cache: read_block needs block_bytes() bytes");
  const size_t bytes = tile_bytes();
  uint8_t* at = out.data();
  for_each_tile(sequence(seq).blocks.at(static_cast<size_t>(index)), [&](const uint16_t* k, const uint16_t* v) {
    std::memcpy(at, k, bytes);
    std::memcpy(at + bytes, v, bytes);
    at += 2 * bytes;
  });
}

int32_t KvCache::adopt(int32_t parent, uint64_t hash, std::span<const int32_t> block_tokens,
                       std::span<const uint8_t> data) {
  if (data.size() != block_bytes()) throw std::invalid_argument("KV cache: adopt needs block_bytes() bytes");
  if (free_blocks() == 0) return -1;
  if (parent >= 0) hold(parent);  // taking a block must not evict the parent
  const int32_t block = take_block();
  if (parent >= 0) let_go(parent);
  const size_t bytes = tile_bytes();
  const uint8_t* at = data.data();
  for_each_tile(block, [&](uint16_t* k, uint16_t* v) {
    std::memcpy(k, at, bytes);
    std::memcpy(v, at + bytes, bytes);
    at += 2 * bytes;
  });
  const bool published = index_.publish(block, parent, hash, block_tokens) == block;
  let_go(block);  // idle when published, free otherwise
  return published ? block : -1;
}

int64_t KvCache::tile_offset(int layer, int64_t kv_head, int64_t block) const {
  const int64_t group = block / group_blocks_;
  return (((group * n_layer_ + layer) * n_head_kv_ + kv_head) * group_blocks_ + block % group_blocks_) *
         head_dim_ * block_size_;
}

void KvCache::store(int seq, int layer, int64_t pos, const float* k, const float* v) {
  const int64_t block = sequence(seq).blocks.at(static_cast<size_t>(pos / block_size_)), slot = pos % block_size_;
  constexpr int64_t kPiece = 64;  // key dimensions converted at once, then spread down the tile
  uint16_t k_half[kPiece];
  for (int64_t h = 0; h < n_head_kv_; ++h) {
    const int64_t tile = tile_offset(layer, h, block);
    uint16_t* k_slot = k_data() + tile + slot;  // dimension d at k_slot[d * block_size]
    for (int64_t d0 = 0; d0 < head_dim_; d0 += kPiece) {
      const int64_t n = std::min(kPiece, head_dim_ - d0);
      kernels::f32_to_f16_row(k + h * head_dim_ + d0, n, k_half);
      for (int64_t d = 0; d < n; ++d) k_slot[(d0 + d) * block_size_] = k_half[d];
    }
    kernels::f32_to_f16_row(v + h * head_dim_, head_dim_, v_data() + tile + slot * head_dim_);
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
          .group_blocks = group_blocks_,
          .group_stride = tile_offset(0, 0, group_blocks_)};
}

void KvCache::set_length(int seq, int64_t n) {
  if (n < 0 || n > blocks_of(seq) * block_size_)
    throw std::out_of_range("KV cache: length " + std::to_string(n) + " beyond the blocks of sequence " +
                            std::to_string(seq));
  sequences_[seq].length = n;
}

}  // namespace nanoserve::model
