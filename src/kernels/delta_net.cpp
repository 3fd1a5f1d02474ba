#include "kernels/delta_net.h"

namespace nanoserve::kernels {

void delta_net_step_reference(float* s, const float* q, const float* k, const float* v, float beta, float decay,
                              float scale, float* out, int64_t d) {
  for (int64_t j = 0; j < d; ++j) out[j] = 0.0f;
  for (int64_t i = 0; i < d; ++i)  // out = Sᵀk for now, before the decay
    for (int64_t j = 0; j < d; ++j) out[j] += s[i * d + j] * k[i];
  for (int64_t j = 0; j < d; ++j) out[j] = beta * (v[j] - out[j] * decay);  // δ
  const float* delta = out;
  // out is δ until every row is updated; Sᵀq accumulates beside it, per column.
  for (int64_t j = 0; j < d; ++j) {
    float read = 0.0f;
    const float dj = delta[j];
    for (int64_t i = 0; i < d; ++i) {
      float& x = s[i * d + j];
      x = x * decay + k[i] * dj;
      read += x * q[i];
    }
    out[j] = read * scale;
  }
}

}  // namespace nanoserve::kernels
