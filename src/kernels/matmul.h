// Weight matrix × a batch of activation rows: out[r][o] = sum_i W[o][i] * x[r][i].
//
// W is read in place (typically from the mmapped GGUF file), row o at data + o * row_bytes,
// in any type act_type_for() accepts. Each weight row is read once per call and used for
// every activation row, so a batch of prompt tokens costs one pass over the weights.
// Output rows are split between the pool's threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "gguf/types.h"
#include "kernels/activations.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_rows.h"

namespace nanoserve::kernels {

struct Matrix {
  TensorType type = TensorType::F32;
  const uint8_t* data = nullptr;
  int64_t n_in = 0;    // row length (ggml ne[0])
  int64_t n_out = 0;   // number of rows
  uint64_t row_bytes = 0;
  // Q8_0, Q5_0, Q4_0, Q4_K, Q6_K, F32, F16 or BF16 rows regrouped in place by interleave_rows()
  // (tensor/interleave.h): groups of 8 rows, in pairs (rows 16p..16p+15 at data + 16p * row_bytes);
  // tensor::group_blocks() finds a row's group.
  bool interleaved = false;

  uint64_t bytes() const { return row_bytes * static_cast<uint64_t>(n_out); }
};

// Whether this CPU's best kernels read interleaved matrices faster than plain rows (the
// x86 targets; elsewhere interleaved rows would be unpacked one by one).
bool interleaving_pays();

// Whether interleaved BF16 weights multiply in BF16 pairs (AVX-512 BF16's vdpbf16ps: two products
// a lane per instruction) where this CPU has them; else as floats. Tests turn it off to compare
// the two paths; turning it on where the CPU lacks the instruction changes nothing.
bool bf16_pair_dots();
void set_bf16_pair_dots(bool on);
// Whether interleave_rows() applies: a type with an interleaved layout (tensor/interleave.h) with
// whole groups of 8 rows.
bool can_interleave(const Matrix& w);
// Rewrites w's rows (writable memory) in the interleaved layout, on the pool's threads.
void interleave_rows(Matrix& w, ThreadPool& pool);
// Row o of w in file layout: a pointer into w, or, for an interleaved matrix, into `row.raw`
// where it is unpacked.
const uint8_t* weight_row(const Matrix& w, int64_t o, DecodedRow& row);

// The activation rows of a fused kernel call.
struct FusedActs {
  std::vector<Q8Row> rows;
};

// Per-thread working memory of matmul: a decoded weight row, its group sums, and the views of
// the activation rows the fused kernels take.
class MatmulScratch {
 public:
  MatmulScratch(int n_threads, int64_t max_n_in);
  DecodedRow& row(int thread) { return rows_[thread]; }
  int32_t* groups(int thread) { return groups_[thread].data(); }
  FusedActs& fused(int thread) { return fused_[thread]; }
  int n_threads() const { return static_cast<int>(rows_.size()); }
  int64_t max_n_in() const { return max_n_in_; }

 private:
  int64_t max_n_in_;
  std::vector<DecodedRow> rows_;
  std::vector<std::vector<int32_t>> groups_;
  std::vector<FusedActs> fused_;
};

// out[r * out_stride + o] for every activation row r and weight row o. acts.n_cols() must
// equal w.n_in. Uses the SIMD kernels of the best target this CPU supports.
void matmul(const Matrix& w, Activations& acts, float* out, int64_t out_stride, ThreadPool& pool,
            MatmulScratch& scratch);

// Several weight matrices against the same activation rows in one pass of the pool (the
// query, key and value projections; gate and up): fewer thread hand-offs, and the threads
// split all their rows at once, so small matrices do not leave threads idle.
struct MatmulOutput {
  const Matrix* w;
  float* out;
  int64_t out_stride;
};
void matmul_many(std::initializer_list<MatmulOutput> outputs, Activations& acts, ThreadPool& pool,
                 MatmulScratch& scratch);

// Matrices each against activation rows of their own, in one pass of the pool: a mixture of
// experts computes every chosen expert's gate and up (each on the rows that chose it) in one
// hand-off, then every down in another, instead of a hand-off per expert and matrix.
struct MatmulJob {
  const Matrix* w;
  Activations* acts;
  float* out;
  int64_t out_stride;
};
void matmul_jobs(std::span<const MatmulJob> jobs, ThreadPool& pool, MatmulScratch& scratch);

// The same with the scalar reference kernels on one thread (for tests).
void matmul_reference(const Matrix& w, Activations& acts, float* out, int64_t out_stride);

}  // namespace nanoserve::kernels
