// Q8_0 rows interleaved in groups of 8 ("Q8_0x8"): the layout the x86 matmul kernels read
// fastest, made in place from 8 consecutive Q8_0 rows at model load (same size).
//
// A group of 8 rows of n elements is n/32 blocks of 272 bytes. Block b holds the 8 rows'
// block b: first their 8 scales (fp16, row j at bytes 2j..2j+1), then 8 chunks of 32 bytes;
// chunk k holds elements 4k..4k+3 of each row (row j at bytes 4j..4j+3) as level + 128.
// One 32-byte chunk is then one vector whose int32 lane j belongs to row j: a byte dot
// product with 4 activation bytes broadcast to every lane advances all 8 rows at once, and
// the block's 8 results come out in one vector, with no sums across lanes. Unsigned levels
// let the kernel use unsigned x signed byte products with the activations as they are.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nanoserve::tensor {

inline constexpr int kInterleaveRows = 8;
inline constexpr size_t kQ8_0x8BlockBytes = 8 * 34;

// Rewrites 8 consecutive Q8_0 rows of n elements (n a multiple of 32), starting at `rows`,
// as one interleaved group. tmp: room for 8 rows (8 * n / 32 * 34 bytes).
void interleave_q8_0(uint8_t* rows, int64_t n, uint8_t* tmp);

// Row `lane` (0..7) of an interleaved group, written back in Q8_0 layout (n / 32 * 34 bytes).
void deinterleave_q8_0_row(const uint8_t* group, int64_t n, int lane, uint8_t* out);

}  // namespace nanoserve::tensor
