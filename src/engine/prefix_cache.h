// The prefix cache's policy, one object: which token prefixes the KV pool holds (PrefixIndex,
// chain hashes), finding and attaching them for a new sequence, publishing a sequence's whole
// blocks as it computes them, the disk tier (KvDiskCache: spill on release, load before a
// start), the logits after recent prompts (LastLogitsCache: an exact resend chooses its first
// token with no forward pass), per-block state besides keys and values, and its counters.
// model::KvCache is the mechanism under it: blocks, references, kept blocks idle until evicted.
//
// A sequence keeps its chain hashes (extend_chain) and passes them with its tokens; the cache
// keeps, per slot, how far the slot's blocks are published. Everything runs on the scheduler's
// thread except stats().
//
// State besides KV (PrefixCacheOptions::block_states, and always for a pool with delta-net layers):
// a model whose layers carry a recurrent state cannot resume from positions alone. The forward
// pass copies a sequence's state at the last block boundary each step crosses (plan_capture); the
// copy is kept with the published block that ends there (keep_captured, keep_state), forgotten
// when that block is evicted or the copies outgrow their bound (least recently used first), and a
// prefix is found only up to the last block with a state (whole blocks: a state cannot be cut
// inside one); attaching it restores the state. With the disk tier, the copies go to disk beside the
// blocks (files of their own) and come back with them.
#pragma once

#include <atomic>
#include <list>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/kv_disk_cache.h"
#include "engine/last_logits_cache.h"
#include "engine/prefix_index.h"
#include "model/kv_cache.h"

namespace nanoserve::engine {

struct PrefixCacheOptions {
  bool enabled = true;                              // off: find finds nothing, publish keeps nothing
  PrefixIndex::HashFn hash = PrefixIndex::chain_hash;  // a test may force collisions
  size_t last_logits = 4;                           // prompts whose logits are kept
  std::optional<KvDiskOptions> disk = std::nullopt;  // the disk tier; none without
  bool block_states = false;                        // a hit needs a kept state at its last block
  int64_t max_state_bytes = int64_t{1} << 30;       // the kept states' bound (one is always kept)
};

struct PrefixCacheStats {
  uint64_t lookups = 0, hit_tokens = 0, miss_tokens = 0;  // sequences started, their positions found and not
  uint64_t logits_hits = 0;                               // first tokens chosen from kept logits
};

class PrefixCache {
 public:
  // Over `pool` (which must outlive it), for its n_seq slots. Throws std::invalid_argument for a
  // disk tier on a pool that shares no prefixes, and what KvDiskCache throws.
  PrefixCache(model::KvCache& pool, PrefixCacheOptions options = {});
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  bool enabled() const { return enabled_; }
  // Appends the chain hashes of the whole blocks of `tokens` that `hashes` lacks.
  void extend_chain(std::span<const int32_t> tokens, std::vector<uint64_t>& hashes) const {
    index_.extend_chain(tokens, hashes);
  }

  struct Hit {
    model::KvCache::Attachment attachment;
    int64_t pool_cost = 0;  // free blocks attaching takes
  };
  // The longest cached prefix of `tokens`, at most `limit` positions: whole blocks shared, then
  // the first positions of a cached block copied where `limit` ends inside a matched block, or
  // where the tokens past the whole blocks begin a cached block that followed them.
  Hit find(std::span<const int32_t> tokens, std::span<const uint64_t> hashes, int64_t limit) const;
  // The prefix a sequence would start with: every position when the logits after them are kept,
  // else all but the last (it must compute that one for its logits).
  Hit find_start(std::span<const int32_t> tokens, std::span<const uint64_t> hashes) const;
  // Starts an empty slot from find_start's hit when the pool has room for it, and counts the
  // lookup. Returns the positions it starts with.
  int64_t start(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes);
  void attach(int slot, const Hit& hit);  // the pool must have hit.pool_cost free blocks
  // Publishes the slot's whole blocks computed since the last call (hashes: over `tokens`).
  void publish(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes);
  // Empties the slot (model::KvCache::clear), its published blocks spilled to the disk tier first.
  void release(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes);

  // Reads the blocks that follow the pooled prefix of `tokens` from the disk tier into the pool,
  // at most `room` of them.
  void prefetch(std::span<const int32_t> tokens, std::span<const uint64_t> hashes, int64_t room);
  const KvDiskCache* disk() const { return disk_.get(); }
  const KvDiskCache* state_disk() const { return state_disk_.get(); }

  void keep_logits(std::span<const int32_t> tokens, std::span<const float> logits);
  // The logits kept after exactly `tokens` (empty when none), counted as a hit; valid until the
  // next keep_logits().
  std::span<const float> take_logits(std::span<const int32_t> tokens);

  // The state after the slot's block `index` (published already); ignored unless block_states.
  void keep_state(int slot, int64_t index, std::vector<float> state);
  std::span<const float> state_after(int32_t block) const;  // empty when none is kept
  // Before a step that takes the slot from `cached` to `end` positions: asks the pool for a copy
  // of its recurrent state at `hint` where it is a block boundary in (cached, end] (where another
  // sequence's prompt parts from this one's), else at the last block boundary there. After the
  // step (and publish): keeps the copy taken with its block.
  void plan_capture(int slot, int64_t cached, int64_t end, int64_t hint = 0);
  void keep_captured(int slot);

  PrefixCacheStats stats() const;  // any thread

 private:
  struct Slot {
    int64_t published = 0;  // leading blocks of its table offered to the index
    int32_t chain = -1;     // the published block that holds the same prefix as its block published - 1
    bool publishing = true;  // false once a block could not be published (the rest never are)
    int64_t state_kept_at = 0;  // the position of the last captured state kept
    int64_t computed = 0;       // positions whose keys and values a finished step wrote (publish)
  };
  struct KeptState {
    std::vector<float> state;
    std::list<int32_t>::iterator recent;  // its place in states_by_use_
  };
  void end_at_state(Hit& hit) const;  // block_states: back to the last block with a state
  void keep_tail(int slot, std::span<const int32_t> tokens);
  void spill(int slot, std::span<const int32_t> tokens, std::span<const uint64_t> hashes);
  void forget(int32_t block);  // the pool evicted it
  void keep_state_of(int32_t block, std::vector<float> state);
  void drop_state(int32_t block);
  void prefetch_state(std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                      std::span<const int32_t> chain);

  model::KvCache& pool_;
  const bool enabled_;
  const bool block_states_;
  PrefixIndex index_;
  std::vector<Slot> slots_;
  LastLogitsCache last_logits_;
  std::unique_ptr<KvDiskCache> disk_;
  std::unique_ptr<KvDiskCache> state_disk_;  // a hybrid model's kept states; none without the disk tier
  std::vector<uint8_t> block_buffer_;  // one block, to and from the disk tier
  std::unordered_map<int32_t, KeptState> states_;  // by published block
  std::list<int32_t> states_by_use_;                // the blocks of states_, least recently used first
  int64_t state_bytes_ = 0;
  const int64_t max_state_bytes_;
  std::atomic<uint64_t> lookups_ = 0, hit_tokens_ = 0, miss_tokens_ = 0, logits_hits_ = 0;
};

}  // namespace nanoserve::engine
