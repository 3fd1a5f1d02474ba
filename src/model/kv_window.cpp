#include "model/kv_window.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nanoserve::model {

KvWindow::KvWindow(int n_layer, int64_t n_head_kv, int64_t head_dim, int64_t block_size, int64_t n_blocks, int n_seq,
                   int64_t window, kernels::KvType type)
    : tiles_(n_layer, n_head_kv, head_dim, block_size, n_blocks, type),
      block_size_(block_size),
      n_blocks_(n_blocks),
      window_(window),
      sequences_(static_cast<size_t>(n_seq)) {
  free_.reserve(static_cast<size_t>(n_blocks));
  for (int64_t b = n_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

int64_t KvWindow::blocks_before_window(int64_t pos) const {
  const int64_t first_seen = pos + 1 - window_;  // kernels::window_start of a row that sees pos + 1 positions
  return first_seen > 0 ? first_seen / block_size_ : 0;
}

void KvWindow::reserve(int seq, int64_t length, int64_t n_positions) {
  Sequence& s = sequences_.at(static_cast<size_t>(seq));
  const auto dead = std::min<int64_t>(blocks_before_window(length), static_cast<int64_t>(s.blocks.size()));
  // Let go of in reverse, so that the free list gives them back in ascending order: a window's
  // blocks then lie in address order more often, as the prefetchers like.
  for (int64_t i = dead - 1; i >= s.released; --i) {
    free_.push_back(s.blocks[static_cast<size_t>(i)]);
    s.blocks[static_cast<size_t>(i)] = -1;
  }
  s.released = std::max(s.released, dead);
  const int64_t want = (n_positions + block_size_ - 1) / block_size_;
  while (static_cast<int64_t>(s.blocks.size()) < want) {
    if (free_.empty()) throw std::logic_error("KV cache: the sliding-window pool ran out of blocks");
    s.blocks.push_back(free_.back());
    free_.pop_back();
  }
}

void KvWindow::truncate(int seq, int64_t n) {
  if (n == 0) return clear(seq);
  Sequence& s = sequences_.at(static_cast<size_t>(seq));
  if (!can_truncate(seq, n))
    throw std::out_of_range("KV cache: sequence " + std::to_string(seq) + " let go of the window that position " +
                            std::to_string(n) + " needs");
  const auto keep = static_cast<size_t>(std::max((n + block_size_ - 1) / block_size_, s.released));
  while (s.blocks.size() > keep) {
    free_.push_back(s.blocks.back());
    s.blocks.pop_back();
  }
}

void KvWindow::clear(int seq) {
  Sequence& s = sequences_.at(static_cast<size_t>(seq));
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it)
    if (*it >= 0) free_.push_back(*it);
  s = Sequence{};
}

int64_t KvWindow::blocks_of(int seq) const {
  const Sequence& s = sequences_.at(static_cast<size_t>(seq));
  return static_cast<int64_t>(s.blocks.size()) - s.released;
}

void KvWindow::store(int seq, int layer, int64_t pos, const float* k, const float* v) {
  const int32_t block = sequences_[static_cast<size_t>(seq)].blocks.at(static_cast<size_t>(pos / block_size_));
  if (block < 0) throw std::logic_error("KV cache: a position behind the window is stored");
  tiles_.store(layer, block, pos % block_size_, k, v);
}

}  // namespace nanoserve::model
