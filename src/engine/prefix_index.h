// Which blocks of the KV pool hold which token prefixes: the prefix cache's lookup table.
//
// A whole block of the pool (block_size positions) is named by a chain hash: the hash of its
// tokens mixed with the chain hash of the block before it, so equal chain hashes stand for
// equal whole prefixes. A hash is only a key, never a proof: a match is accepted only when the
// block's own tokens are equal, and it was computed after the very block matched just before
// it (its parent block, in the same generation: a parent evicted and reused since then cuts
// the chain). By induction a matched block holds the keys and values of exactly the tokens
// asked for, whatever the hash function does; a collision only costs a miss.
//
// The index knows nothing of reference counts or memory: KvCache decides which blocks are
// published and which are evicted.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nanoserve::engine {

class PrefixIndex {
 public:
  // Mixes one block's tokens into the chain hash of the blocks before it.
  using HashFn = uint64_t (*)(uint64_t parent, std::span<const int32_t> block_tokens);
  static uint64_t chain_hash(uint64_t parent, std::span<const int32_t> block_tokens);
  static constexpr uint64_t kRootHash = 0x6e616e6f73657276;  // the parent of a prefix's first block

  // For n_blocks blocks of block_size positions. `hash` is replaceable so that a test can force
  // collisions.
  PrefixIndex(int64_t n_blocks, int64_t block_size, HashFn hash = chain_hash);

  int64_t block_size() const { return block_size_; }
  // Appends to `hashes` the chain hashes of the whole blocks of `tokens` it does not cover yet
  // (hashes[i]: the prefix of (i + 1) × block_size tokens). Incremental: a sequence keeps its
  // vector and extends it as its tokens grow.
  void extend_chain(std::span<const int32_t> tokens, std::vector<uint64_t>& hashes) const;

  // The blocks that hold the longest published prefix of `tokens`, in order (whole blocks only;
  // hashes from extend_chain, at least as many as the tokens' whole blocks).
  std::vector<int32_t> match(std::span<const int32_t> tokens, std::span<const uint64_t> hashes) const;
  // Of the blocks published after `parent` (a matched block, or -1 for a prefix's first block),
  // the one whose first tokens agree longest with `tokens` (at most a block of them, at most a
  // tail's own): its block and how many agree (0: none).
  // Those positions' keys and values are the ones `tokens` would get: a position depends only
  // on the tokens up to it.
  std::pair<int32_t, int64_t> longest_child(int32_t parent, std::span<const int32_t> tokens) const;

  // Publishes `block` as holding the whole block of `block_tokens` whose chain hash is `hash`,
  // computed after `parent` (the published block holding the prefix before it; -1 for a first
  // block). Returns the published block that now stands for this prefix: `block`, or one
  // published earlier with the same tokens after the same parent (then `block` stays private,
  // and its successors publish after that one, whose keys and values are the same). -1 when
  // the key belongs to other tokens (a collision) or the parent is not published: the caller
  // stops publishing that sequence.
  int32_t publish(int32_t block, int32_t parent, uint64_t hash, std::span<const int32_t> block_tokens);
  bool published(int32_t block) const { return entries_[static_cast<size_t>(block)].published; }
  // Publishes `block` as holding the first tail_tokens.size() (< block_size) positions of the
  // block after `parent` (-1: the first block): a released sequence's last, partly filled block,
  // which only longest_child finds (a resend of the same prompt, a follow-up). Returns `block`,
  // or a child of `parent` published before whose tokens begin with these (then `block` stays
  // private), or -1 when the parent is not published.
  int32_t publish_tail(int32_t block, int32_t parent, std::span<const int32_t> tail_tokens);
  // Forgets a block (it is about to hold other positions); blocks published after it no
  // longer match.
  void forget(int32_t block);
  int64_t size() const { return static_cast<int64_t>(by_hash_.size()); }

 private:
  struct Entry {
    bool published = false;
    uint64_t hash = 0;
    int32_t parent = -1;
    uint32_t parent_generation = 0;
    std::vector<int32_t> tokens;  // block_size tokens (a tail: fewer)
    bool tail = false;            // published by publish_tail: not in by_hash_
  };
  bool parent_matches(const Entry& e, int32_t parent) const;
  bool holds(const Entry& e, int32_t parent, std::span<const int32_t> block_tokens) const;

  int64_t block_size_;
  HashFn hash_;
  std::vector<Entry> entries_;         // per block id
  std::vector<uint32_t> generation_;   // per block id: how many times it was forgotten
  std::unordered_map<int32_t, std::vector<int32_t>> children_;  // published blocks by parent (-1: the root)
  std::unordered_map<uint64_t, int32_t> by_hash_;
};

}  // namespace nanoserve::engine
