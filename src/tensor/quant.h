// Weight types: convert rows between float and each type's block layout.
// These are the scalar reference conversions; SIMD kernels live in src/kernels/.
#pragma once

#include <cstdint>

#include "gguf/types.h"

namespace nanoserve::tensor {

using gguf::TensorType;

bool can_dequantize(TensorType type);
bool can_quantize(TensorType type);

// n must be a multiple of the type's block size; src holds n / block_elems blocks.
// Throws std::invalid_argument for an unsupported type or a bad n.
void dequantize_row(TensorType type, const void* src, float* dst, int64_t n);
void quantize_row(TensorType type, const float* src, void* dst, int64_t n);

// As llama-quantize with an imatrix: importance holds one weight per element of src (the
// imatrix entries of the row's columns; nullptr: none, as quantize_row). Only the types whose
// weighted search we reproduce bit for bit: IQ4_NL, IQ4_XS, and MXFP4 (which ignores them).
// Throws std::invalid_argument for other types.
bool can_quantize_with_importance(TensorType type);
void quantize_row_with_importance(TensorType type, const float* src, const float* importance, void* dst, int64_t n);

}  // namespace nanoserve::tensor
