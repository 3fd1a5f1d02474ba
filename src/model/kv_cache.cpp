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

enum LayerKind : uint8_t { kTiles, kWindow, kRecurrent };

// The layers' places: per layer, its kind and its index among its kind.
std::vector<int> layer_places(const ModelConfig& c, std::vector<uint8_t>& kinds) {
  std::vector<int> at;
  int count[3] = {0, 0, 0};
  for (uint32_t l = 0; l < c.n_cache_layers(); ++l) {
    const uint8_t kind = c.recurrent(l) ? kRecurrent : c.windowed(l) ? kWindow : kTiles;
    kinds.push_back(kind);
    at.push_back(count[kind]++);
  }
  return at;
}

}  // namespace

KvCache::KvCache(const ModelConfig& c, int64_t capacity, int n_seq, int64_t block_size)
    : n_layer_(static_cast<int>(c.n_cache_layers())),
      n_head_kv_(c.n_head_kv),
      head_dim_(c.head_dim),
      block_size_(block_size),
      n_blocks_(pool_blocks(capacity, n_seq, block_size)),
      refs_(static_cast<size_t>(n_blocks_), 0),
      kept_(static_cast<size_t>(n_blocks_), 0),
      idle_at_(static_cast<size_t>(n_blocks_)),
      layer_at_(layer_places(c, kind_)),
      tiles_(static_cast<int>(c.n_cache_layers() - c.n_windowed_layers() - c.n_recurrent_layers()), n_head_kv_,
             head_dim_, block_size_, n_blocks_, c.kv_type) {
  sequences_.resize(n_seq);
  free_.reserve(n_blocks_);
  // Taken from the back: block 0 first, so a lone sequence fills the pool in address order.
  for (int64_t b = n_blocks_ - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
  if (c.n_windowed_layers() > 0)
    window_ = std::make_unique<KvWindow>(static_cast<int>(c.n_windowed_layers()), n_head_kv_, head_dim_, block_size_,
                                         n_blocks_, n_seq, c.sliding_window, c.kv_type);
  if (c.n_recurrent_layers() > 0) recurrent_ = std::make_unique<RecurrentStates>(c, n_seq);
}

bool KvCache::fits(const ModelConfig& c) const {
  std::vector<uint8_t> kinds;
  layer_places(c, kinds);
  return n_layer_ == static_cast<int>(c.n_cache_layers()) && n_head_kv_ == c.n_head_kv && head_dim_ == c.head_dim &&
         kinds == kind_ && c.kv_type == tiles_.type() &&
         (!recurrent_ || recurrent_->bytes_per_sequence() == static_cast<size_t>(recurrent_bytes(c))) &&
         (!window_ || window_->window() == static_cast<int64_t>(c.sliding_window));
}

size_t KvCache::bytes_of(int seq) const {
  return static_cast<size_t>(blocks_of(seq)) * block_bytes() +
         (window_ ? static_cast<size_t>(window_->blocks_of(seq)) * window_->block_bytes() : 0) +
         (recurrent_ ? recurrent_->bytes_per_sequence() : 0);
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
  if (recurrent_) recurrent_->clear(seq);
}

void KvCache::truncate(int seq, int64_t n) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (n > s.length || cuts_kept_block(s, n) || !state_can_go_back(seq, n))
    throw std::out_of_range("KV cache: cannot truncate sequence " + std::to_string(seq) + " of length " +
                            std::to_string(s.length) + " to " + std::to_string(n) +
                            " (beyond it, into a kept block, or behind its recurrent state's copy)");
  if (window_) window_->truncate(seq, n);  // first: it throws when n is behind its window
  if (recurrent_ && n < s.length) recurrent_->rewind(seq);
  s.length = n;
  const auto keep = static_cast<size_t>((n + block_size_ - 1) / block_size_);
  while (s.blocks.size() > keep) {
    let_go(s.blocks.back());
    s.blocks.pop_back();
  }
}

bool KvCache::can_truncate(int seq, int64_t n) const {
  const Sequence& s = sequence(seq);
  return state_can_go_back(seq, n) && n <= s.length && !cuts_kept_block(s, n) &&
         (!window_ || window_->can_truncate(seq, n));
}

bool KvCache::state_can_go_back(int seq, int64_t n) const {
  return !recurrent_ || n >= sequence(seq).length || recurrent_->captured_position(seq) == n;
}

bool KvCache::cuts_kept_block(const Sequence& s, int64_t n) const {
  const auto at = static_cast<size_t>(n / block_size_);  // the first block that changes
  return n < s.length && at < s.blocks.size() && kept(s.blocks[at]);
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
    kept_[static_cast<size_t>(block)] = 0;
    ++evictions_;
    if (on_evict_) on_evict_(block);
  }
  refs_[static_cast<size_t>(block)] = 1;
  return block;
}

void KvCache::hold(int32_t block) {
  if (refs_[static_cast<size_t>(block)]++ == 0) idle_.erase(idle_at_[static_cast<size_t>(block)]);
}

void KvCache::let_go(int32_t block) {
  if (--refs_[static_cast<size_t>(block)] > 0) return;
  if (kept(block)) {
    idle_at_[static_cast<size_t>(block)] = idle_.insert(idle_.end(), block);
  } else {
    free_.push_back(block);
  }
}

int64_t KvCache::attach_cost(const Attachment& a) const {
  int64_t cost = a.copied >= 0 ? 1 : 0;
  for (int32_t b : a.blocks) cost += refs_[static_cast<size_t>(b)] == 0 ? 1 : 0;
  return cost;
}

void KvCache::attach(int seq, const Attachment& a) {
  sequence(seq);  // checks the id
  Sequence& s = sequences_[seq];
  if (!s.blocks.empty()) throw std::logic_error("KV cache: a prefix is attached to an empty sequence only");
  if (attach_cost(a) > free_blocks()) throw std::logic_error("KV cache: too few free blocks to attach the prefix");
  for (int32_t b : a.blocks) {
    hold(b);
    s.blocks.push_back(b);
  }
  if (a.copied >= 0) {
    // When the pool has only idle blocks left, the one taken may be the copied block itself
    // (evicted, so now our own): its keys and values are still in place.
    const int32_t own = take_block();
    if (own != a.copied) tiles_.copy_block(a.copied, own);
    s.blocks.push_back(own);
  }
  s.length = a.positions;
}

void KvCache::keep(int32_t block) {
  if (!shares_prefixes()) throw std::logic_error("KV cache: a windowed cache keeps no blocks");
  kept_.at(static_cast<size_t>(block)) = 1;
}

int64_t KvCache::shared_blocks(int seq) const {
  int64_t shared = 0;
  for (int32_t b : sequence(seq).blocks) shared += refs_[static_cast<size_t>(b)] > 1 ? 1 : 0;
  return shared;
}

void KvCache::drop_idle() {
  for (int32_t block : idle_) {
    kept_[static_cast<size_t>(block)] = 0;
    free_.push_back(block);
    if (on_evict_) on_evict_(block);
  }
  idle_.clear();
}

void KvCache::read_block(int32_t block, std::span<uint8_t> out) const { tiles_.read_block(block, out); }

int32_t KvCache::fill_idle_block(std::span<const uint8_t> data, int32_t spare) {
  if (data.size() != block_bytes()) throw std::invalid_argument("KV cache: a block's data is block_bytes() bytes");
  if (free_blocks() == 0 || !shares_prefixes()) return -1;
  if (spare >= 0) hold(spare);  // taking a block must not evict it
  const int32_t block = take_block();
  if (spare >= 0) let_go(spare);
  tiles_.write_block(block, data);
  kept_[static_cast<size_t>(block)] = 1;
  let_go(block);
  return block;
}

void KvCache::discard(int32_t block) {
  const auto b = static_cast<size_t>(block);
  if (refs_.at(b) != 0 || !kept_[b]) throw std::logic_error("KV cache: only an idle kept block is discarded");
  idle_.erase(idle_at_[b]);
  kept_[b] = 0;
  free_.push_back(block);
}

void KvCache::store(int seq, int layer, int64_t pos, const float* k, const float* v) {
  const int at = layer_at_[static_cast<size_t>(layer)];
  if (kind_[static_cast<size_t>(layer)] == kWindow) return window_->store(seq, at, pos, k, v);
  tiles_.store(at, sequence(seq).blocks.at(static_cast<size_t>(pos / block_size_)), pos % block_size_, k, v);
}

kernels::KvView KvCache::view(int seq, int layer) const {
  const int at = layer_at_[static_cast<size_t>(layer)];
  if (kind_[static_cast<size_t>(layer)] == kWindow) return window_->view(seq, at);
  return tiles_.view(at, sequence(seq).blocks.data());
}

void KvCache::set_length(int seq, int64_t n) {
  if (n < 0 || n > blocks_of(seq) * block_size_)
    throw std::out_of_range("KV cache: length " + std::to_string(n) + " beyond the blocks of sequence " +
                            std::to_string(seq));
  sequences_[seq].length = n;
}

float* KvCache::conv_state(int seq, int layer) {
  sequence(seq);  // checks the id
  if (kind_.at(static_cast<size_t>(layer)) != kRecurrent) throw std::logic_error("KV cache: not a recurrent layer");
  return recurrent_->conv(seq, layer_at_[static_cast<size_t>(layer)]);
}

float* KvCache::delta_state(int seq, int layer) {
  sequence(seq);  // checks the id
  if (kind_.at(static_cast<size_t>(layer)) != kRecurrent) throw std::logic_error("KV cache: not a recurrent layer");
  return recurrent_->matrices(seq, layer_at_[static_cast<size_t>(layer)]);
}

}  // namespace nanoserve::model
