#include "model/recurrent_state.h"

#include <algorithm>

namespace nanoserve::model {

RecurrentStates::RecurrentStates(const ModelConfig& c, int n_seq)
    : conv_floats_(static_cast<size_t>(c.ssm_conv_kernel - 1) * c.ssm_conv_channels()),
      matrix_floats_(static_cast<size_t>(c.ssm_value_heads) * c.ssm_head_dim * c.ssm_head_dim),
      per_seq_((conv_floats_ + matrix_floats_) * c.n_recurrent_layers()),
      data_(per_seq_ * static_cast<size_t>(n_seq), 0.0f) {}

void RecurrentStates::clear(int seq) {
  std::fill_n(data_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(seq) * per_seq_), per_seq_, 0.0f);
}

}  // namespace nanoserve::model
