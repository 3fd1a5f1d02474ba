#include "model/recurrent_state.h"

#include <algorithm>
#include <stdexcept>

namespace nanoserve::model {

RecurrentStates::RecurrentStates(const ModelConfig& c, int n_seq)
    : conv_floats_(static_cast<size_t>(c.ssm_conv_kernel - 1) * c.ssm_conv_channels()),
      matrix_floats_(static_cast<size_t>(c.ssm_value_heads) * c.ssm_head_dim * c.ssm_head_dim),
      head_floats_(static_cast<size_t>(c.ssm_head_dim) * c.ssm_head_dim),
      per_seq_((conv_floats_ + matrix_floats_) * c.n_recurrent_layers()),
      data_(per_seq_ * static_cast<size_t>(n_seq), 0.0f),
      capture_(static_cast<size_t>(n_seq), -1),
      captured_(static_cast<size_t>(n_seq), -1) {}

void RecurrentStates::clear(int seq) {
  std::fill_n(data_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(seq) * per_seq_), per_seq_, 0.0f);
  capture_[static_cast<size_t>(seq)] = captured_[static_cast<size_t>(seq)] = -1;
}

void RecurrentStates::capture(int seq, int64_t position) {
  if (position >= 0 && copies_.empty()) copies_.resize(data_.size());
  capture_[static_cast<size_t>(seq)] = position;
}

void RecurrentStates::copy_conv(int seq, int index) {
  const size_t at = offset(seq, index);
  std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(at), conv_floats_,
              copies_.begin() + static_cast<std::ptrdiff_t>(at));
}

void RecurrentStates::copy_matrix(int seq, int index, int64_t head) {
  const size_t at = offset(seq, index) + conv_floats_ + static_cast<size_t>(head) * head_floats_;
  std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(at), head_floats_,
              copies_.begin() + static_cast<std::ptrdiff_t>(at));
}

void RecurrentStates::mark_captured(int seq) {
  captured_[static_cast<size_t>(seq)] = capture_[static_cast<size_t>(seq)];
  capture_[static_cast<size_t>(seq)] = -1;
}

std::vector<float> RecurrentStates::captured(int seq) const {
  const auto first = copies_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(seq) * per_seq_);
  return {first, first + static_cast<std::ptrdiff_t>(per_seq_)};
}

void RecurrentStates::rewind(int seq) {
  if (captured_[static_cast<size_t>(seq)] < 0) throw std::logic_error("recurrent state: no copy to go back to");
  const auto at = static_cast<std::ptrdiff_t>(static_cast<size_t>(seq) * per_seq_);
  std::copy_n(copies_.begin() + at, per_seq_, data_.begin() + at);
}

void RecurrentStates::restore(int seq, const std::vector<float>& state) {
  if (state.size() != per_seq_) throw std::invalid_argument("recurrent state: a copy of another shape");
  std::copy(state.begin(), state.end(), data_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(seq) * per_seq_));
}

}  // namespace nanoserve::model
