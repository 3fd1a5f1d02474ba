// Internal to kernels/: the per-thread body of a matmul (weight rows [o0, o1) against every
// activation row), in a scalar reference version and a SIMD version.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/activations.h"
#include "kernels/matmul.h"
#include "kernels/weight_rows.h"

namespace nanoserve::kernels {

// Up to this many activation rows (decode of one to three sequences) a matmul is bound by
// reading the weights, so it reads a pair of interleaved groups (tensor/interleave.h) as one
// stream in one pass of the 8-lane kernels, with no software prefetch: the hardware prefetchers
// follow one sequential stream per core best. From four rows on, the 512-bit kernels' wider byte
// dots pay. Chosen by measurement: experiments/kernel-notes.md.
constexpr int64_t kStreamRows = 3;

struct MatmulTask {
  const Matrix* w;
  const Activations* acts;  // already prepared for act_type_for(w->type)
  float* out;
  int64_t out_stride;
};

// The activation row r of a Q8 form, as combine() takes it.
Q8Row q8_row(const Activations& acts, ActType type, int64_t r);

void matmul_range_reference(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups);
// fused: per-thread room for the fused kernels' views of the activation rows.
void matmul_range_simd(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups,
                       FusedActs& fused);

}  // namespace nanoserve::kernels
