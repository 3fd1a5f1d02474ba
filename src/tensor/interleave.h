// Rows of Q8_0, Q5_0, Q4_0, IQ4_NL, MXFP4, Q4_K, Q6_K, IQ4_XS, F32, F16 and BF16 interleaved in
// groups of 8: the layout the x86 matmul kernels read fastest, made in place from 8 consecutive
// rows at model load (same size). A group's block b holds the 8 rows' block b so that a vector's lane j
// belongs to row j: one byte dot product (floats: one multiply-add) advances all 8 rows, with
// no sums across lanes. A matrix's groups then go in pairs, block by block (rows 16p..16p+15:
// group 2p's block 0, group 2p + 1's block 0, group 2p's block 1, ...; the last group of an odd
// number stands alone), so that a kernel taking 16 rows a step reads one sequential stream,
// which the hardware prefetchers follow where two streams a group apart they do not.
// The bytes of each type's block: interleave.cpp, beside the code that writes them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/types.h"

namespace nanoserve::tensor {

inline constexpr int kInterleaveRows = 8;
inline constexpr int kPairRows = 2 * kInterleaveRows;

// Whether rows of `type` have an interleaved layout (those above).
bool has_interleaved_layout(gguf::TensorType type);

// Bytes of one interleaved block (8 rows × 32 elements, 256 for the K-quants and IQ4_XS, 1 for floats).
size_t interleaved_block_bytes(gguf::TensorType type);
// Elements of each row in one interleaved block: 32, 256 for the K-quants and IQ4_XS, 1 for floats.
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
