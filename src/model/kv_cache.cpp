#include "model/kv_cache.h"

#include <algorithm>
#include <string>

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

// The layers' places: per layer, whether it is windowed and its index among its kind.
std::vector<int> layer_places(const ModelConfig& c, std::vector<bool>& windowed) {
  std::vector<int> at;
  int full = 0, local = 0;
  for (uint32_t l = 0; l < c.n_layer; ++l) {
    windowed.push_back(c.windowed(l));
    at.push_back(c.windowed(l) ? local++ : full++);
  }
  return at;
}

}  // namespace

KvCache::KvCache(const ModelConfig& c, int64_t capacity, int n_seq, int64_t block_size, PrefixIndex::HashFn hash)
    : n_layer_(static_cast<int>(c.n_layer)),
      n_head_kv_(c.n_head_kv),
      head_dim_(c.head_dim),
      block_size_(block_size),
      n_blocks_(pool_blocks(capacity, n_seq, block_size)),
      refs_(static_cast<size_t>(n_blocks_), 0),
      index_(n_blocks_, block_size, hash),
      idle_at_(static_cast<size_t>(n_blocks_)),
      layer_at_(layer_places(c, windowed_)),
      tiles_(static_cast<int>(c.n_layer - c.n_windowed_layers()), n_head_kv_, head_dim_, block_size_, n_blocks_,
             c.kv_type) {
  sequences_.resize(n_seq);
  free_.reserve(n_blocks_);
  // Taken from the back: block 0 first, so a lone sequence fills the pool in address order.
  for (int64_t b = n_blocks_ - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
  if (c.n_windowed_layers() > 0)
    window_ = std::make_unique<KvWindow>(static_cast<int>(c.n_windowed_layers()), n_head_kv_, head_dim_, block_size_,
                                         n_blocks_, n_seq, c.sliding_window, c.kv_type);
}

bool KvCache::fits(const ModelConfig& c) const {
  std::vector<bool> windowed;
  layer_places(c, windowed);
  return n_layer_ == static_cast<int>(c.n_layer) && n_head_kv_ == c.n_head_kv && head_dim_ == c.head_dim &&
         windowed == windowed_ && c.kv_type == tiles_.type() &&
         (!window_ || window_->window() == static_cast<int64_t>(c.sliding_window));
}

size_t KvCache::bytes_of(int seq) const {
  return static_cast<size_t>(blocks_of(seq)) * block_bytes() +
         (window_ ? static_cast<size_t>(window_->blocks_of(seq)) * window_->block_bytes() : 0);
}

size_t KvCache::used_bytes() const {
  return static_cast<size_t>(used_blocks()) * block_bytes() +
         (window_ ? static_cast<size_t>(window_->used_blocks()) * window_->block_bytes() : 0);
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
  if (window_) window_->reserve(seq, sequences_[seq].length, n_positions);
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
  if (window_) window_->clear(seq);
}

void KvCache::truncate(int seq, int64_t n) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (n > s.length || n < s.published * block_size_)
    throw std::out_of_range("KV cache: cannot truncate sequence " + std::to_string(seq) + " of length " +
                            std::to_string(s.length) + " (" + std::to_string(s.published) +
                            " published blocks) to " + std::to_string(n));
  if (window_) window_->truncate(seq, n);  // first: it throws when n is behind its window
  s.length = n;
  const auto keep = static_cast<size_t>((n + block_size_ - 1) / block_size_);
  while (s.blocks.size() > keep) {
    let_go(s.blocks.back());
    s.blocks.pop_back();
  }
}

bool KvCache::can_truncate(int seq, int64_t n) const {
  const Sequence& s = sequence(seq);
  return n <= s.length && n >= s.published * block_size_ && (!window_ || window_->can_truncate(seq, n));
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
  if (!shares_prefixes()) return hit;
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
    if (own != hit.copied) tiles_.copy_block(hit.copied, own);
    s.blocks.push_back(own);
  }
  s.length = hit.positions;
}

void KvCache::publish(int seq, std::span<const int32_t> tokens, std::span<const uint64_t> hashes) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (!shares_prefixes()) return;
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

void KvCache::read_block(int seq, int64_t index, std::span<uint8_t> out) const {
  tiles_.read_block(sequence(seq).blocks.at(static_cast<size_t>(index)), out);
}

int32_t KvCache::adopt(int32_t parent, uint64_t hash, std::span<const int32_t> block_tokens,
                       std::span<const uint8_t> data) {
  if (data.size() != block_bytes()) throw std::invalid_argument("KV cache: adopt needs block_bytes() bytes");
  if (free_blocks() == 0 || !shares_prefixes()) return -1;
  if (parent >= 0) hold(parent);  // taking a block must not evict the parent
  const int32_t block = take_block();
  if (parent >= 0) let_go(parent);
  tiles_.write_block(block, data);
  const bool published = index_.publish(block, parent, hash, block_tokens) == block;
  let_go(block);  // idle when published, free otherwise
  return published ? block : -1;
}

void KvCache::store(int seq, int layer, int64_t pos, const float* k, const float* v) {
  const int at = layer_at_[static_cast<size_t>(layer)];
  if (windowed_[static_cast<size_t>(layer)]) return window_->store(seq, at, pos, k, v);
  tiles_.store(at, sequence(seq).blocks.at(static_cast<size_t>(pos / block_size_)), pos % block_size_, k, v);
}

kernels::KvView KvCache::view(int seq, int layer) const {
  const int at = layer_at_[static_cast<size_t>(layer)];
  if (windowed_[static_cast<size_t>(layer)]) return window_->view(seq, at);
  return tiles_.view(at, sequence(seq).blocks.data());
}

void KvCache::set_length(int seq, int64_t n) {
  if (n < 0 || n > blocks_of(seq) * block_size_)
    throw std::out_of_range("KV cache: length " + std::to_string(n) + " beyond the blocks of sequence " +
                            std::to_string(seq));
  sequences_[seq].length = n;
}

}  // namespace nanoserve::model
