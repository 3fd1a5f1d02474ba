// The working buffers of the gated delta-net layers (delta_net.cpp). Only a model with such layers
// makes them (Model::delta_), so other models carry none of them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/row_buffer.h"

namespace nanoserve::model {

struct DeltaNetWorkspace {
  explicit DeltaNetWorkspace(const ModelConfig& c);
  void reserve(int64_t rows);

  RowBuffer qkv;          // [ssm_conv_channels]  projected, then convolved in place
  RowBuffer z;            // [ssm_inner]  the output gate
  RowBuffer beta, alpha;  // [ssm_value_heads]
  RowBuffer out;          // [ssm_inner]  the heads' outputs, normed and gated
  // The batch's rows by sequence: a sequence's rows go through its state in position order.
  std::vector<int64_t> order, starts;
};

}  // namespace nanoserve::model
