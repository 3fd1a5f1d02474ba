// Rows of Q8_0, Q5_0, Q4_0, Q4_K, Q6_K, F32, F16 and BF16 interleaved in groups of 8: the
// layout the x86 matmul kernels read fastest, made in place from 8 consecutive rows at model
// load (same size).
//
// A group of 8 rows of n elements is n/32 blocks of 8 × sizeof(block) bytes. Block b holds
// the 8 rows' block b: first their 8 scales (fp16, row j at bytes 2j..2j+1), then their
// levels as unsigned numbers u (Q8_0: level + 128; Q5_0: level + 16; Q4_0: level + 8, which
// is what the file stores for those two), by chunk: chunk k holds elements 4k..4k+3 of each
// row, row j at bytes 4j..4j+3 of a 32-byte vector. Such a vector's int32 lane j belongs to
// row j: a byte dot product with 4 activation bytes broadcast to every lane advances all 8
// rows at once, and the block's 8 results come out in one vector, with no sums across lanes.
//   Q8_0: 8 chunks of 32 bytes, u as bytes.
//   Q4_0: 4 vectors of 32 bytes; vector m holds chunk 2m in the low nibbles and chunk 2m + 1
//         in the high nibbles.
//   Q5_0: as Q4_0 for the low 4 bits of u, then 8 words of 32 bits: bit p of word k is the
//         fifth bit of byte p of chunk k.
// Q4_K interleaves super-blocks (256 elements, 8 × 144 bytes): the 8 rows' d (fp16, bytes
// 0..15) and dmin (16..31); their 6-bit scales and mins by index i = 8 × sub-block + row:
// the low 4 bits of scale and min in the two nibbles of byte 32 + i, the top 2 bits of each
// (scale's in bits 0-1, min's in bits 2-3) in a nibble of byte 96 + i % 32 (low nibble for
// i < 32); then sub-block j's levels (0..15) at 128 + 128 j as Q4_0's 4 vectors.
// Q6_K likewise (8 × 210 bytes): the 8 rows' d (bytes 0..15); their int8 scales of 16
// elements in pairs, byte 16 + 16 i + 2 row + h holding scale 2i + h of the row; then per
// sub-block j of 32, at 144 + 192 j, the low 4 bits of its levels u (0..63) as Q4_0's 4
// vectors and their top 2 bits in 2 more: bits 2h..2h+1 of byte p of vector v belong to
// byte p of chunk 4v + h.
//
// F32, F16 and BF16 blocks are one element: block b holds element b of the 8 rows, row j at
// j × the element's size. A pair of groups (below) then holds, for each element, the 16 rows'
// values side by side: a vector of them is 16 outputs' next term (kernels/float_panels-inl.h),
// with no sums across lanes.
//
// A matrix's groups then go in pairs, block by block: rows 16p..16p+15 (groups 2p and 2p + 1)
// hold group 2p's block 0, group 2p + 1's block 0, group 2p's block 1, ..., so that a kernel
// taking the two groups at once (16 rows a step) reads them as one sequential stream, which
// the hardware prefetchers follow at the full rate where two streams a group apart they do
// not. The last group of an odd number stands alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/types.h"

namespace nanoserve::tensor {

inline constexpr int kInterleaveRows = 8;
inline constexpr int kPairRows = 2 * kInterleaveRows;

// Whether rows of `type` have an interleaved layout (Q8_0, Q5_0, Q4_0, Q4_K, Q6_K, F32, F16, BF16).
bool has_interleaved_layout(gguf::TensorType type);

// Bytes of one interleaved block (8 rows × 32 elements, 256 for the K-quants, 1 for floats) of `type`.
size_t interleaved_block_bytes(gguf::TensorType type);
// Elements of each row in one interleaved block: 32, 256 for the K-quants, 1 for floats.
int64_t interleaved_block_elems(gguf::TensorType type);

// Rewrites 8 consecutive rows of n elements (n a multiple of the block), starting at `rows`, as one
// interleaved group. tmp: room for the 8 rows.
void interleave_rows(gguf::TensorType type, uint8_t* rows, int64_t n, uint8_t* tmp);

// Rewrites two consecutive interleaved groups (16 rows of n elements at `rows`) as a pair.
// tmp: room for the 16 rows.
void pair_groups(gguf::TensorType type, uint8_t* rows, int64_t n, uint8_t* tmp);

// Where the group holding row o of an interleaved matrix (n_out rows of n elements, in
// pairs) keeps its blocks: block b at `offset + b * stride` bytes from the matrix's start.
struct GroupBlocks {
  uint64_t offset;
  uint64_t stride;
};
GroupBlocks group_blocks(gguf::TensorType type, int64_t n, int64_t n_out, int64_t o);

// Row `lane` (0..7) of an interleaved group whose block b lies at first_block + b * stride,
// written back in file layout.
void deinterleave_row(gguf::TensorType type, const uint8_t* first_block, uint64_t stride, int64_t n, int lane,
                      uint8_t* out);

}  // namespace nanoserve::tensor
