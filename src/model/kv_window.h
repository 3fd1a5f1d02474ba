// The keys and values of a model's sliding-window layers (Gemma 3's local layers), which only
// ever read the last `window` positions of a sequence: each sequence holds the blocks from the
// one its next row's window begins in, and lets go of a block once every later row's window has
// passed it, so the memory a sequence holds stops growing at about window + one call's rows.
// Gemma 3 4B at 16k tokens: its 29 local layers hold 1024 + 512 positions instead of 16384.
//
// The pool has as many blocks as the KvCache that owns it, and a sequence never holds more here
// than there (the same positions, fewer of them): it cannot run out while its owner has room.
// What a window keeps is not shared between sequences: prefixes are not cached (KvCache).
//
// A sequence's block table keeps an entry for every block of its positions, those let go of
// marked -1: the attention kernels look blocks up by position and never read those (a window's
// rows start at the block their window begins in: kernels::for_each_kv_run).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "model/kv_tiles.h"

namespace nanoserve::model {

class KvWindow {
 public:
  KvWindow(int n_layer, int64_t n_head_kv, int64_t head_dim, int64_t block_size, int64_t n_blocks, int n_seq,
           int64_t window, kernels::KvType type = kernels::KvType::F16);

  // Readies `seq`, which holds `length` positions, for rows up to position n_positions - 1: lets
  // go of the blocks before the window of its row at position `length`, and takes blocks up to
  // n_positions. Throws std::logic_error if the pool has too few (see the top of this file).
  void reserve(int seq, int64_t length, int64_t n_positions);
  // Lets go of the blocks past the first n positions. Throws std::out_of_range when position
  // n's window would need a block already let go of.
  void truncate(int seq, int64_t n);
  bool can_truncate(int seq, int64_t n) const {
    return n == 0 || blocks_before_window(n) >= sequences_.at(static_cast<size_t>(seq)).released;
  }
  void clear(int seq);
  int64_t window() const { return window_; }
  int64_t used_blocks() const { return n_blocks_ - static_cast<int64_t>(free_.size()); }
  int64_t blocks_of(int seq) const;  // blocks the sequence holds now
  size_t block_bytes() const { return tiles_.block_bytes(); }
  size_t bytes() const { return tiles_.bytes(); }

  // As KvCache::store and view, for the window's layers (0 .. n_layer - 1).
  void store(int seq, int layer, int64_t pos, const float* k, const float* v);
  kernels::KvView view(int seq, int layer) const { return tiles_.view(layer, sequences_[seq].blocks.data()); }

 private:
  struct Sequence {
    std::vector<int32_t> blocks;  // per block of positions: its block in the pool, -1 once let go of
    int64_t released = 0;         // leading entries of `blocks` let go of
  };
  // The blocks wholly before the window of a row at position `pos`.
  int64_t blocks_before_window(int64_t pos) const;

  KvTiles tiles_;
  int64_t block_size_, n_blocks_, window_;
  std::vector<Sequence> sequences_;
  std::vector<int32_t> free_;  // taken from the back
};

}  // namespace nanoserve::model
