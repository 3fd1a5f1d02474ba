// The keys and values of every layer for each sequence, as F16, for up to n_ctx positions.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/attention.h"
#include "model/config.h"

namespace nanoserve::model {

class KvCache {
 public:
  // Room for n_seq sequences of n_ctx positions each (throws std::invalid_argument when
  // n_ctx or n_seq is not positive).
  KvCache(const ModelConfig& config, int64_t n_ctx, int n_seq = 1);

  int64_t n_ctx() const { return n_ctx_; }
  // Whether this cache was made for a model of this shape.
  bool fits(const ModelConfig& c) const { return n_layer_ == static_cast<int>(c.n_layer) && kv_dim_ == c.kv_dim(); }
  int n_seq() const { return static_cast<int>(length_.size()); }
  int64_t length(int seq) const { return length_.at(seq); }  // positions filled so far
  void clear(int seq) { length_.at(seq) = 0; }
  size_t bytes() const { return (k_.size() + v_.size()) * sizeof(uint16_t); }

  // The forward pass writes position pos of a sequence, then reads positions [0, pos].
  uint16_t* k_row(int seq, int layer, int64_t pos) { return k_.data() + offset(seq, layer, pos); }
  uint16_t* v_row(int seq, int layer, int64_t pos) { return v_.data() + offset(seq, layer, pos); }
  kernels::KvView view(int seq, int layer) const {
    return {k_.data() + offset(seq, layer, 0), v_.data() + offset(seq, layer, 0), kv_dim_};
  }
  void set_length(int seq, int64_t n) { length_.at(seq) = n; }

 private:
  int64_t offset(int seq, int layer, int64_t pos) const {
    return ((static_cast<int64_t>(seq) * n_layer_ + layer) * n_ctx_ + pos) * kv_dim_;
  }

  int64_t n_ctx_;
  int n_layer_;
  int64_t kv_dim_;
  std::vector<int64_t> length_;
  std::vector<uint16_t> k_, v_;
};

}  // namespace nanoserve::model
