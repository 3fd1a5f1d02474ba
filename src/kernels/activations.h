// The input rows of a matmul, converted to the form each weight type's dot product takes.
//
// As llama.cpp does on x86 (the reference our logits are checked against), activations are
// not multiplied in float against quantized weights: they are first rounded to the weight's
// "vec-dot type" and the dot product of a block is computed on integers:
//   F32 weights  -> F32                   F16 weights  -> F16 (round to nearest even)
//   BF16 weights -> BF16                  Q4_0, Q5_0, Q8_0 -> Q8_0 blocks of 32
//   Q4_1, Q5_1   -> Q8_1 (Q8_0 + the block's sum)        Q2_K..Q6_K -> Q8_K blocks of 256
// Rows are stored planar (all levels of a row contiguous, scales apart) so that SIMD kernels
// can stream them. The F16 and BF16 forms hold the rounded values widened back to float (exact),
// so the kernels convert each activation once per matmul, not once per weight row.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/types.h"
#include "kernels/thread_pool.h"

namespace nanoserve::kernels {

using gguf::TensorType;

enum class ActType { F32, F16, BF16, Q8_0, Q8_1, Q8_K };

// Throws std::invalid_argument for a weight type no matmul supports.
ActType act_type_for(TensorType weight_type);

// Q8_0 / Q8_1 rows (llama.cpp's x86 quantize_row_q8_0/_q8_1): per block of 32,
// d = amax / 127 stored as fp16, levels round(x * 127 / amax) to nearest even;
// Q8_1 also keeps s = fp16(d * sum of levels). d and s are kept as the floats the fp16s hold.
struct Q8Block32Rows {
  std::vector<int8_t> q;     // rows × n
  std::vector<float> d;      // rows × n/32
  std::vector<float> s;      // rows × n/32
  std::vector<uint8_t> u;  // rows × n: q + 128, for the fused kernels' unsigned × signed products
  std::vector<int32_t> minus_128_sums;  // rows × n/32: −128 × the block's level sum (interleaved blocks of 32)
};

// Q8_K rows (ggml's quantize_row_q8_K): per 256, float d and 16-element level sums.
struct Q8KRows {
  std::vector<int8_t> q;       // rows × n
  std::vector<float> d;        // rows × n/256
  std::vector<int16_t> bsums;  // rows × n/16
};

// Rows of floats: row r at data + r * stride.
struct FloatRows {
  const float* data;
  int64_t stride;
  const float* row(int64_t r) const { return data + r * stride; }
};

class Activations {
 public:
  // Points at n_rows rows of n_cols floats (row r at x + r * stride), which must stay alive
  // and unchanged until the next set(). Converted forms are made on first request.
  void set(const float* x, int64_t n_rows, int64_t n_cols, int64_t stride);
  // Makes sure the form for `type` exists, quantizing rows on the pool's threads if given.
  void prepare(ActType type, ThreadPool* pool = nullptr);

  int64_t n_rows() const { return n_rows_; }
  int64_t n_cols() const { return n_cols_; }
  const float* f32(int64_t r) const { return x_ + r * stride_; }
  // The F32, F16 or BF16 form: the rows, or their values rounded to F16 / BF16.
  FloatRows float_rows(ActType type) const;
  // The BF16 form's bit patterns (row r at r × n_cols), for the kernels that multiply BF16 pairs.
  const uint16_t* bf16_bits(int64_t r) const { return bf16_bits_.data() + r * n_cols_; }
  const Q8Block32Rows& q8_block32() const { return q8_; }
  const Q8KRows& q8_k() const { return q8k_; }

 private:
  const float* x_ = nullptr;
  int64_t n_rows_ = 0, n_cols_ = 0, stride_ = 0;
  bool have_[6] = {};
  std::vector<float> f16_, bf16_;
  std::vector<uint16_t> bf16_bits_;
  Q8Block32Rows q8_;
  Q8KRows q8k_;
};

// One row of n floats to Q8_0/Q8_1 form (q, u: n levels; d, s, minus_128_sums: n/32 each).
void quantize_q8_block32(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u,
                         int32_t* minus_128_sums);
// One row of n floats to Q8_K form (q: n; d: n/256; bsums: n/16).
void quantize_q8_k(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums);

// The same, with the SIMD kernels of the best target this CPU supports (bit-identical).
void quantize_q8_block32_simd(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u,
                              int32_t* minus_128_sums);
void quantize_q8_k_simd(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums);
// out[i] = x[i] rounded to the nearest F16 / BF16 (ties to even) and widened back, for i < n, as
// tensor::f32_to_f16 / f32_to_bf16 round (bit-identical; NaN stays NaN).
void round_through_f16_simd(const float* x, int64_t n, float* out);
void round_through_bf16_simd(const float* x, int64_t n, float* out);
// out[i] = tensor::f32_to_f16(x[i]), bit for bit, for i < n (F16C where the CPU has it): the KV
// cache's keys and values.
void f32_to_f16_row(const float* x, int64_t n, uint16_t* out);

}  // namespace nanoserve::kernels
