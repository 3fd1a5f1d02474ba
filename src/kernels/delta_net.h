// One token through one value head of a gated delta-net layer (model/delta_net.cpp): the head's
// d × d state S (rows by key dimension) decays, learns v at key k with strength beta, and is
// read at query q:
//   S ← decay · S;   δ = beta (v − Sᵀk);   S ← S + k δᵀ;   out = scale · Sᵀq
// Two passes over S: Sᵀk (read only; the decay applied to the sum), then the decay, the update and
// Sᵀq, each row written once.
#pragma once

#include <cstdint>

namespace nanoserve::kernels {

void delta_net_step(float* s, const float* q, const float* k, const float* v, float beta, float decay, float scale,
                    float* out, int64_t d);
// The same in plain loops: the portable path, and what the SIMD one is tested against.
void delta_net_step_reference(float* s, const float* q, const float* k, const float* v, float beta, float decay,
                              float scale, float* out, int64_t d);

}  // namespace nanoserve::kernels
