// The delta-net layers' memory of a sequence (ModelConfig::recurrent): for each such layer the
// causal convolution's last conv_kernel - 1 inputs and each value head's d × d state matrix. Its
// size does not grow with the sequence; a sequence starts from zeros, and only going on from its
// last position is possible (there is no going back, as there is for keys and values).
//
// A copy of a sequence's state as it was at a chosen position can be taken while the forward
// pass goes by it (capture()), so that the prefix cache can keep it with the block that ends
// there, and a sequence can start again from such a copy (restore()), or go back to it (rewind()).
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
  size_t bytes() const { return (data_.size() + copies_.size()) * sizeof(float); }

  // Asks for a copy of seq's state after its row at position - 1 (-1: none); the forward pass
  // takes it layer by layer (copy_conv, copy_matrix) and then marks it taken.
  void capture(int seq, int64_t position);
  int64_t capture_position(int seq) const { return capture_[static_cast<size_t>(seq)]; }
  void copy_conv(int seq, int index);                 // the layer's convolution inputs, now
  void copy_matrix(int seq, int index, int64_t head);  // a value head's matrix, now
  void mark_captured(int seq);
  // The position of the copy taken (-1: none yet), and the copy.
  int64_t captured_position(int seq) const { return captured_[static_cast<size_t>(seq)]; }
  std::vector<float> captured(int seq) const;
  // seq's state becomes its copy again (speculative decoding: back to the position of the copy,
  // captured_position, when the draft tokens after it are rejected).
  void rewind(int seq);
  // seq's state becomes `state` (a copy of bytes_per_sequence()).
  void restore(int seq, const std::vector<float>& state);

 private:
  size_t offset(int seq, int index) const {
    return static_cast<size_t>(seq) * per_seq_ + static_cast<size_t>(index) * (conv_floats_ + matrix_floats_);
  }
  size_t conv_floats_;    // (conv_kernel - 1) × channels
  size_t matrix_floats_;  // value_heads × d × d
  size_t head_floats_;    // d × d
  size_t per_seq_;
  std::vector<float> data_;
  std::vector<float> copies_;  // a copy per sequence, made on the first capture()
  std::vector<int64_t> capture_, captured_;  // per sequence
};

}  // namespace nanoserve::model
