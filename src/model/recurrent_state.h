// The delta-net layers' memory of a sequence (ModelConfig::recurrent): for each such layer the
// causal convolution's last conv_kernel - 1 inputs and each value head's d × d state matrix. Its
// size does not grow with the sequence; a sequence starts from zeros, and only going on from its
// last position is possible (there is no going back, as there is for keys and values).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace nanoserve::model {

class RecurrentStates {
 public:
  RecurrentStates(const ModelConfig& c, int n_seq);

  // Layer `index` among the recurrent ones, of sequence `seq`.
  float* conv(int seq, int index) { return data_.data() + offset(seq, index); }
  float* matrices(int seq, int index) { return conv(seq, index) + conv_floats_; }
  void clear(int seq);  // back to zeros: the sequence starts again
  size_t bytes_per_sequence() const { return per_seq_ * sizeof(float); }
  size_t bytes() const { return data_.size() * sizeof(float); }

 private:
  size_t offset(int seq, int index) const {
    return static_cast<size_t>(seq) * per_seq_ + static_cast<size_t>(index) * (conv_floats_ + matrix_floats_);
  }
  size_t conv_floats_;    // (conv_kernel - 1) × channels
  size_t matrix_floats_;  // value_heads × d × d
  size_t per_seq_;
  std::vector<float> data_;
};

}  // namespace nanoserve::model
