// A working buffer of the forward pass: one row of `width` floats per batch row, the rows one
// after another. Named views replace offset arithmetic: q.head(r, h) rather than
// q.data() + r * q_dim + h * head_dim.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/scratch.h"

namespace nanoserve::model {

class RowBuffer {
 public:
  // Rows of `width` floats; a row of heads is `width / head_width` heads of `head_width`.
  explicit RowBuffer(int64_t width, int64_t head_width = 0) : width_(width), head_width_(head_width) {}

  int64_t width() const { return width_; }
  float* data() { return values_.data(); }
  float* row(int64_t r) { return values_.data() + r * width_; }
  const float* row(int64_t r) const { return values_.data() + r * width_; }
  float* head(int64_t r, int64_t h) { return row(r) + h * head_width_; }
  // Grows (never shrinks) to hold `rows` rows.
  void reserve(int64_t rows) { kernels::grow(values_, static_cast<size_t>(rows * width_)); }

 private:
  int64_t width_, head_width_;
  std::vector<float> values_;
};

}  // namespace nanoserve::model
