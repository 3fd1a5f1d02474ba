// Internal to src/tensor: the per-block codecs that quant.cpp dispatches to.
// encode_block(x, b) quantizes b.kElems floats into one block; decode_block(b, y) expands it.
// The quantizers expect finite input: NaN or inf in x gives an unspecified (but defined) block.
#pragma once

#include <cstdint>
#include <utility>

#include "tensor/blocks.h"

namespace nanoserve::tensor {

// float_types.cpp: whole rows of plain floats (src/dst may be unaligned).
void dequantize_f32(const void* src, float* dst, int64_t n);
void quantize_f32(const float* src, void* dst, int64_t n);
void dequantize_f16(const void* src, float* dst, int64_t n);
void quantize_f16(const float* src, void* dst, int64_t n);
void dequantize_bf16(const void* src, float* dst, int64_t n);
void quantize_bf16(const float* src, void* dst, int64_t n);

// legacy_quants.cpp
void decode_block(const BlockQ4_0& b, float* y);
void decode_block(const BlockQ4_1& b, float* y);
void decode_block(const BlockQ5_0& b, float* y);
void decode_block(const BlockQ5_1& b, float* y);
void decode_block(const BlockQ8_0& b, float* y);
void encode_block(const float* x, BlockQ4_0& b);
void encode_block(const float* x, BlockQ4_1& b);
void encode_block(const float* x, BlockQ5_0& b);
void encode_block(const float* x, BlockQ5_1& b);
void encode_block(const float* x, BlockQ8_0& b);

// k_quants.cpp
void decode_block(const BlockQ2_K& b, float* y);
void decode_block(const BlockQ3_K& b, float* y);
void decode_block(const BlockQ4_K& b, float* y);
void decode_block(const BlockQ5_K& b, float* y);
void decode_block(const BlockQ6_K& b, float* y);
void decode_block(const BlockQ8_K& b, float* y);
void encode_block(const float* x, BlockQ2_K& b);
void encode_block(const float* x, BlockQ3_K& b);
void encode_block(const float* x, BlockQ4_K& b);
void encode_block(const float* x, BlockQ5_K& b);
void encode_block(const float* x, BlockQ6_K& b);
void encode_block(const float* x, BlockQ8_K& b);
// nonlinear_quants.cpp: IQ4_NL, IQ4_XS, MXFP4. The IQ4 encoders take optional importance
// weights (one per element of x, as llama-quantize passes an imatrix row); MXFP4 has none.
void decode_block(const BlockIQ4_NL& b, float* y);
void decode_block(const BlockIQ4_XS& b, float* y);
void decode_block(const BlockMXFP4& b, float* y);
void encode_block(const float* x, BlockIQ4_NL& b, const float* importance = nullptr);
void encode_block(const float* x, BlockIQ4_XS& b, const float* importance = nullptr);
void encode_block(const float* x, BlockMXFP4& b);
// The 6-bit scale (0..63, stored with +32) of IQ4_XS sub-block j (0..7).
int iq4_xs_scale(const BlockIQ4_XS& b, int j);

// The 6-bit scale and min of sub-block j (0..7) in Q4_K / Q5_K's 12 scale bytes; set_
// writes them (sub-blocks 0..3 first: the others OR into their bytes; s starts zeroed).
std::pair<int, int> scale_min_k4(const uint8_t* s, int j);
void set_scale_min_k4(uint8_t* s, int j, int sc, int m);

}  // namespace nanoserve::tensor
