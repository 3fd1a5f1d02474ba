#include "kernels/gelu.h"

#include <cmath>
#include <vector>

#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

// The F16-rounded GELU of each of the 65,536 F16 values, built once (256 KiB).
const std::vector<float>& gelu_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(1 << 16);
    for (uint32_t h = 0; h < t.size(); ++h)
      t[h] = tensor::f16_to_f32(tensor::f32_to_f16(gelu_exact(tensor::f16_to_f32(static_cast<uint16_t>(h)))));
    return t;
  }();
  return table;
}

// gelu(v) by the table (see gelu.h).
float gelu_of(const std::vector<float>& table, float v) {
  return v <= -10.0f ? 0.0f : v >= 10.0f ? v : table[tensor::f32_to_f16(v)];
}

}  // namespace

float gelu_exact(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

void gelu(const float* x, float* out, int64_t n) {
  const std::vector<float>& table = gelu_table();
  for (int64_t i = 0; i < n; ++i) out[i] = gelu_of(table, x[i]);
}

void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const std::vector<float>& table = gelu_table();
  for (int64_t i = 0; i < n; ++i) out[i] = gelu_of(table, gate[i]) * up[i];
}

}  // namespace nanoserve::kernels
