// Internal to kernels/: the per-thread body of a matmul (weight rows [o0, o1) against every
// activation row), in a scalar reference version and a SIMD version.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/activations.h"
#include "kernels/matmul.h"
#include "kernels/weight_rows.h"

namespace nanoserve::kernels {

// Up to this many activation rows (decode of one to three sequences) a matmul is bound by the
// weights' stream, and reads it as one, with no software prefetch: a pair of interleaved
// groups (tensor/interleave.h) in one pass of the 8-lane kernels (their 512-bit versions read
// the same stream 4-11% slower in decode: gate/up 4.26-4.38 against 4.78-5.02 ms a step on the
// 0.5B Q4_K_M file). The hardware prefetchers follow one sequential stream per core at the full rate
// (Zen 4 VM, a synthetic stream of 512-bit byte dots: 55-58 GB/s on 2 cores), where a software
// prefetch 32 KiB ahead capped it near 42 GB/s and two streams a group apart (the pair kernel's
// two groups) without one near 30. Measured alternating every two decode steps in one process,
// against pairs of groups with prefetch: 0.5B Q8_0 56-67 -> 61-84 tok/s, Q4_K_M 85-88 -> 100,
// Q4_0 77-96 -> 108-115, 1.7B Q4_K_M 32-35 -> 38; 3 rows +6%, 4 rows -5 to -15%. From four
// rows on, the 512-bit kernels' wider byte dots pay (prefill +17%), still with the prefetch
// (without it, 4 rows +8% on Q8_0 but 6 and 8 rows 25-45% slower). The threads split a
// stream matmul's rows with ThreadPool::Split::kStreams (matmul.cpp).
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
