// The keys and values of every layer, as F16 or Q8_0 (ModelConfig::kv_type), in a paged pool
// shared by all sequences.
//
// The pool is n_blocks blocks of block_size positions; a block holds those positions' keys and
// values for every layer and KV head (laid out as KvTiles says). Each sequence owns a block
// table (the blocks it fills, in position order), so position p of a sequence lives in block
// table[p / block_size] at slot p % block_size. Blocks come from one free list: there is no
// per-sequence context split, and a single sequence may fill the whole pool. Blocks go back to
// the pool on clear().
//
// The forward pass (Model::forward) reserves the blocks its rows need; a scheduler that must
// not fail mid-step reserves them itself beforehand (reserve() says whether the pool had room)
// and preempts when it has not.
//
// Blocks are counted by reference, so that sequences can share them: the prefix cache (its
// policy: engine/prefix_cache.h) attaches a cached prefix's blocks to a new sequence (attach())
// and marks the blocks it indexes as kept (keep()). A block no sequence holds goes back to the
// free list, unless it is kept: then it stays in the pool, idle, until a reservation needs its
// space (the least recently idle first, and the on_evict callback hears of it). free_blocks()
// counts idle blocks as free: the cache holds only memory that no sequence asks for. A sequence
// only writes positions past its attached ones, into blocks of its own, so a kept block is never
// written.
//
// A model's sliding-window layers (ModelConfig::windowed) keep their keys and values in a
// KvWindow of their own, which lets go of what falls behind the window; the pool's blocks hold
// the other layers. Such a cache shares no prefixes (shares_prefixes() is false): a prefix's
// window is gone once its sequence has moved past it. A model's delta-net layers
// (ModelConfig::recurrent) keep no keys and values but a state per sequence (RecurrentStates): a
// sequence can be truncated only to where its state's copy was taken, and one that attaches a
// prefix starts from a copy of the state taken where the prefix ends (restore), which the prefix
// cache keeps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "kernels/attention.h"
#include "model/config.h"
#include "model/kv_tiles.h"
#include "model/kv_window.h"
#include "model/recurrent_state.h"

namespace nanoserve::model {

// Bytes that one position's keys and values take in one layer (in the config's KV type); in every layer that keeps
// all positions (all but the windowed ones: ModelConfig::windowed), what each position adds to
// a sequence's cache; and all that a sequence of n positions holds, its windowed layers' last
// sliding_window positions included (KvWindow holds one forward call's rows more while it runs).
inline int64_t kv_bytes_per_position_layer(const ModelConfig& c) {
  return 2 * c.n_head_kv * kernels::kv_position_bytes(c.kv_type, c.head_dim);
}
inline int64_t kv_bytes_per_position(const ModelConfig& c) {
  return (c.n_cache_layers() - c.n_windowed_layers() - c.n_recurrent_layers()) * kv_bytes_per_position_layer(c);
}
// A sequence's delta-net state, whatever its length (RecurrentStates).
inline int64_t recurrent_bytes(const ModelConfig& c) {
  const int64_t conv = static_cast<int64_t>(c.ssm_conv_kernel > 0 ? c.ssm_conv_kernel - 1 : 0) * c.ssm_conv_channels();
  const int64_t matrices = static_cast<int64_t>(c.ssm_value_heads) * c.ssm_head_dim * c.ssm_head_dim;
  return c.n_recurrent_layers() * (conv + matrices) * static_cast<int64_t>(sizeof(float));
}
inline int64_t kv_bytes_for(const ModelConfig& c, int64_t n) {
  return kv_bytes_per_position(c) * n +
         c.n_windowed_layers() * kv_bytes_per_position_layer(c) * std::min<int64_t>(n, c.sliding_window) +
         recurrent_bytes(c);
}

// Thrown when the pool has too few free blocks for what a forward call needs.
struct KvCacheFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KvCache {
 public:
  static constexpr int64_t kDefaultBlockSize = 16;

  // A pool of ceil(capacity / block_size) blocks for up to n_seq sequences (ids 0..n_seq-1).
  // Throws std::invalid_argument when capacity, n_seq or block_size is not positive.
  KvCache(const ModelConfig& config, int64_t capacity, int n_seq = 1, int64_t block_size = kDefaultBlockSize);

  // Whether this cache was made for a model of this shape.
  bool fits(const ModelConfig& c) const;
  int n_seq() const { return static_cast<int>(sequences_.size()); }
  int64_t block_size() const { return block_size_; }
  int64_t n_blocks() const { return n_blocks_; }
  // Blocks a reservation can have: never used, or idle in the prefix cache.
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size() + idle_.size()); }
  int64_t used_blocks() const { return n_blocks_ - free_blocks(); }  // held by a sequence
  // Positions the pool holds in all: the most one sequence can ever fill.
  int64_t n_ctx() const { return n_blocks_ * block_size_; }
  // Bytes of the pool (the sliding-window layers' included) and of one block of the pool.
  size_t bytes() const {
    return tiles_.bytes() + (window_ ? window_->bytes() : 0) + (recurrent_ ? recurrent_->bytes() : 0);
  }
  size_t block_bytes() const { return tiles_.block_bytes(); }
  // Bytes of the blocks sequences hold, the sliding-window layers' included.
  size_t used_bytes() const;
  bool shares_prefixes() const { return window_ == nullptr; }

  int64_t length(int seq) const { return sequence(seq).length; }  // positions filled so far
  int64_t blocks_of(int seq) const { return static_cast<int64_t>(sequence(seq).blocks.size()); }
  // Its block table: the pool's block ids of its positions, in order (the lab's pages draw them).
  std::span<const int32_t> block_table(int seq) const { return sequence(seq).blocks; }
  // Sequences that hold a block (2 or more: a shared prefix).
  int32_t holders(int32_t block) const { return refs_.at(static_cast<size_t>(block)); }
  // The idle blocks the prefix cache keeps, least recently used first.
  std::vector<int32_t> idle_blocks() const { return {idle_.begin(), idle_.end()}; }
  size_t bytes_of(int seq) const;  // of its blocks, its sliding-window layers' included
  // Blocks the pool must still give `seq` so that it holds n_positions (0 when it already does).
  int64_t blocks_needed(int seq, int64_t n_positions) const;
  // Gives `seq` the blocks it needs to hold n_positions; false, and nothing changes, when the
  // pool has too few free blocks.
  bool reserve(int seq, int64_t n_positions);
  // Empties a sequence: its length becomes 0 and it lets go of its blocks (each goes back to
  // the pool when no other sequence holds it; a kept one stays idle).
  void clear(int seq);
  // Shortens a sequence to its first n positions (speculative decoding drops the positions of
  // rejected draft tokens): blocks past them are let go of. Throws std::out_of_range for n
  // beyond its length or inside a kept block (one the prefix cache shares is never written).
  void truncate(int seq, int64_t n);
  // Whether truncate(seq, n) can (a windowed cache cannot go back behind its windows; a
  // recurrent state only to the position of the copy it took, RecurrentStates::capture).
  bool can_truncate(int seq, int64_t n) const;

  // Sharing blocks (see the top of this file). A prefix to attach: blocks held by reference, in
  // order, then a block whose first positions are copied into one of the sequence's own.
  struct Attachment {
    std::vector<int32_t> blocks;
    int32_t copied = -1;
    int64_t positions = 0;  // positions the sequence holds once attached
  };
  int64_t attach_cost(const Attachment& a) const;  // free blocks attaching takes (idle ones held, the copy)
  // Gives an empty sequence the attachment's positions; the pool must have attach_cost() free blocks.
  void attach(int seq, const Attachment& a);
  void keep(int32_t block);  // stays in the pool, idle, when no sequence holds it
  bool kept(int32_t block) const { return kept_.at(static_cast<size_t>(block)) != 0; }
  // Called with a kept idle block as a reservation takes it (or drop_idle() forgets it).
  void on_evict(std::function<void(int32_t)> callback) { on_evict_ = std::move(callback); }
  int64_t cached_blocks() const { return static_cast<int64_t>(idle_.size()); }  // kept, idle
  int64_t shared_blocks(int seq) const;  // blocks of seq that another sequence holds too
  uint64_t evictions() const { return evictions_; }  // idle kept blocks given to a reservation
  void drop_idle();  // forgets every idle kept block

  // A block's keys and values as block_bytes() bytes (the prefix cache's disk tier).
  void read_block(int32_t block, std::span<uint8_t> out) const;
  // Writes bytes read back into a block the pool can spare (free, else the least recently idle
  // one other than `spare`), kept and idle. Returns it, or -1 when the pool has none to give.
  int32_t fill_idle_block(std::span<const uint8_t> data, int32_t spare);
  void discard(int32_t block);  // an idle kept block goes back to the free list, unkept

  // The forward pass stores position pos of a sequence (reserved already; kv_dim keys and
  // values, rounded to F16), then reads positions [0, pos] through view(), which says where
  // each lies (keys transposed per block: kernels::KvView). Distinct positions may be stored
  // from different threads at once.
  void store(int seq, int layer, int64_t pos, const float* k, const float* v);
  kernels::KvView view(int seq, int layer) const;
  void set_length(int seq, int64_t n);
  // A delta-net layer's state of a sequence (ModelConfig::recurrent): the convolution's last
  // inputs and the value heads' matrices (RecurrentStates).
  float* conv_state(int seq, int layer);
  float* delta_state(int seq, int layer);
  // The delta-net layers' states (nullptr without them), and a layer's index among them.
  RecurrentStates* recurrent_states() { return recurrent_.get(); }
  const RecurrentStates* recurrent_states() const { return recurrent_.get(); }
  int recurrent_index(int layer) const { return layer_at_.at(static_cast<size_t>(layer)); }

 private:
  struct Sequence {
    int64_t length = 0;
    std::vector<int32_t> blocks;  // block table
  };
  const Sequence& sequence(int seq) const;
  bool cuts_kept_block(const Sequence& s, int64_t n) const;  // truncating s to n would write a kept block
  bool state_can_go_back(int seq, int64_t n) const;          // its recurrent state (if any) to n
  int32_t take_block();  // a free block, else the least recently used idle one, with one reference
  void hold(int32_t block);     // one more reference (an idle block leaves the idle list)
  void let_go(int32_t block);   // one reference less

  int n_layer_;
  int64_t n_head_kv_, head_dim_, block_size_, n_blocks_;
  std::vector<Sequence> sequences_;
  std::vector<int32_t> free_;  // free block ids; taken from the back
  std::vector<int32_t> refs_;  // per block: the sequences that hold it
  std::vector<uint8_t> kept_;  // per block: stays idle when nobody holds it
  std::function<void(int32_t)> on_evict_;
  std::list<int32_t> idle_;    // kept blocks nobody holds, least recently idle first
  std::vector<std::list<int32_t>::iterator> idle_at_;  // per block, valid while it is idle
  uint64_t evictions_ = 0;
  // Per layer: where its keys and values are (the pool's tiles, or the window's) and its index there.
  std::vector<uint8_t> kind_;  // per layer: LayerKind
  std::vector<int> layer_at_;
  KvTiles tiles_;                      // the layers that keep every position
  std::unique_ptr<KvWindow> window_;   // the sliding-window layers; none without them
  std::unique_ptr<RecurrentStates> recurrent_;  // the delta-net layers; none without them
};

}  // namespace nanoserve::model
