#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/matmul_range.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/interleave.h"

namespace nanoserve::kernels {
namespace {

void check_shapes(const Matrix& w, const Activations& acts) {
  if (acts.n_cols() != w.n_in)
    throw std::invalid_argument("matmul: activation rows have " + std::to_string(acts.n_cols()) +
                                " columns, the weight rows " + std::to_string(w.n_in));
}

// Element i of an F32, F16 or BF16 weight row.
float float_weight(TensorType type, const uint8_t* row, int64_t i) {
  if (type == TensorType::F32) {
    float v;
    std::memcpy(&v, row + 4 * i, sizeof v);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, row + 2 * i, sizeof bits);
  return type == TensorType::F16 ? tensor::f16_to_f32(bits) : tensor::bf16_to_f32(bits);
}

}  // namespace

MatmulScratch::MatmulScratch(int n_threads, int64_t max_n_in)
    : max_n_in_(max_n_in), rows_(n_threads), groups_(n_threads), fused_(n_threads) {
  for (int t = 0; t < n_threads; ++t) {
    rows_[t].reserve(max_n_in);
    groups_[t].resize(max_n_in / 16 + 1);
  }
}

namespace {

bool cpu_has_bf16_pairs() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

std::atomic<bool> g_bf16_pair_dots{cpu_has_bf16_pairs()};

}  // namespace

bool bf16_pair_dots() { return g_bf16_pair_dots.load(std::memory_order_relaxed); }
void set_bf16_pair_dots(bool on) { g_bf16_pair_dots.store(on && cpu_has_bf16_pairs(), std::memory_order_relaxed); }

bool can_interleave(const Matrix& w) {
  return tensor::has_interleaved_layout(w.type) && !w.interleaved && w.n_out % tensor::kInterleaveRows == 0 &&
         w.n_in % tensor::interleaved_block_elems(w.type) == 0;
}

void interleave_rows(Matrix& w, ThreadPool& pool) {
  if (!can_interleave(w))
    throw std::invalid_argument("interleave_rows: no interleaved layout, or not whole groups of 8 rows");
  auto* data = const_cast<uint8_t*>(w.data);  // the caller made this memory writable
  const uint64_t group_bytes = tensor::kInterleaveRows * w.row_bytes;
  const int64_t n_groups = w.n_out / tensor::kInterleaveRows;
  pool.run(n_groups, [&](int64_t g0, int64_t g1, int) {
    std::vector<uint8_t> tmp(2 * group_bytes);
    for (int64_t g = g0; g < g1; ++g) tensor::interleave_rows(w.type, data + g * group_bytes, w.n_in, tmp.data());
    for (int64_t g = g0; g + 1 < g1; g += 2)  // the grain keeps each pair in one range
      tensor::pair_groups(w.type, data + g * group_bytes, w.n_in, tmp.data());
  }, /*grain=*/2);
  w.interleaved = true;
}

const uint8_t* weight_row(const Matrix& w, int64_t o, DecodedRow& row) {
  if (!w.interleaved) return w.data + o * w.row_bytes;
  const tensor::GroupBlocks group = tensor::group_blocks(w.type, w.n_in, w.n_out, o);
  tensor::deinterleave_row(w.type, w.data + group.offset, group.stride, w.n_in,
                           static_cast<int>(o % tensor::kInterleaveRows), row.raw.data());
  return row.raw.data();
}

Q8Row q8_row(const Activations& acts, ActType type, int64_t r) {
  const int64_t n = acts.n_cols();
  if (type == ActType::Q8_K) {
    const Q8KRows& k = acts.q8_k();
    return {k.q.data() + r * n, k.d.data() + r * (n / 256), nullptr, k.bsums.data() + r * (n / 16)};
  }
  const Q8Block32Rows& b = acts.q8_block32();
  return {b.q.data() + r * n, b.d.data() + r * (n / 32), b.s.data() + r * (n / 32), nullptr, b.u.data() + r * n};
}

void matmul(const Matrix& w, Activations& acts, float* out, int64_t out_stride, ThreadPool& pool,
            MatmulScratch& scratch) {
  matmul_many({{&w, out, out_stride}}, acts, pool, scratch);
}

void matmul_many(std::initializer_list<MatmulOutput> outputs, Activations& acts, ThreadPool& pool,
                 MatmulScratch& scratch) {
  constexpr size_t kMax = 4;
  if (outputs.size() > kMax) throw std::invalid_argument("matmul_many: too many matrices");
  MatmulJob jobs[kMax];
  size_t k = 0;
  for (const MatmulOutput& o : outputs) jobs[k++] = {o.w, &acts, o.out, o.out_stride};
  matmul_jobs({jobs, k}, pool, scratch);
}

void matmul_jobs(std::span<const MatmulJob> jobs, ThreadPool& pool, MatmulScratch& scratch) {
  int64_t total = 0, max_rows = 0;
  for (const MatmulJob& j : jobs) {
    check_shapes(*j.w, *j.acts);
    if (scratch.n_threads() < pool.size() || scratch.max_n_in() < j.w->n_in)
      throw std::invalid_argument("matmul: scratch too small");
    j.acts->prepare(act_type_for(j.w->type), &pool);
    total += j.w->n_out;
    max_rows = std::max(max_rows, j.acts->n_rows());
  }
  // Each thread takes a contiguous range of the matrices' rows laid end to end; in decode,
  // long ones (each range is a stream of weights).
  const auto split = max_rows <= kStreamRows ? ThreadPool::Split::kStreams : ThreadPool::Split::kGuided;
  pool.run(total, [&](int64_t o0, int64_t o1, int thread) {
    int64_t first = 0;  // the row where matrix i starts in that order
    for (const MatmulJob& j : jobs) {
      const MatmulTask task{j.w, j.acts, j.out, j.out_stride};
      const int64_t n_out = task.w->n_out;
      const int64_t begin = std::max(o0, first), end = std::min(o1, first + n_out);
      if (begin < end)
        matmul_range_simd(task, begin - first, end - first, scratch.row(thread), scratch.groups(thread),
                          scratch.fused(thread));
      first += n_out;
      if (first >= o1) break;
    }
  }, /*grain=*/2 * tensor::kInterleaveRows, split);  // whole tiles and pairs of interleaved groups
}

void matmul_reference(const Matrix& w, Activations& acts, float* out, int64_t out_stride) {
  check_shapes(w, acts);
  acts.prepare(act_type_for(w.type));
  MatmulScratch scratch(1, w.n_in);
  matmul_range_reference({&w, &acts, out, out_stride}, 0, w.n_out, scratch.row(0), scratch.groups(0));
}

void matmul_range_reference(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups) {
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const int64_t n = w.n_in;
  const ActType act = act_type_for(w.type);
  for (int64_t o = o0; o < o1; ++o) {
    const uint8_t* wrow = weight_row(w, o, row);
    if (decodes_to_levels(w.type)) decode_row(w.type, wrow, n, row);
    for (int64_t r = 0; r < acts.n_rows(); ++r) {
      double sum = 0.0;
      float result;
      switch (act) {
        case ActType::F32:
        case ActType::F16:
        case ActType::BF16: {
          const float* a = acts.float_rows(act).row(r);
          for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(float_weight(w.type, wrow, i)) * a[i];
          result = static_cast<float>(sum);
          break;
        }
        default: {
          const Q8Row a = q8_row(acts, act, r);
          for (int64_t g = 0; g < n / 16; ++g) {
            int32_t s = 0;
            for (int i = 0; i < 16; ++i) s += row.q[16 * g + i] * a.q[16 * g + i];
            groups[g] = s;
          }
          result = combine(w.type, row, groups, a, n);
        }
      }
      task.out[r * task.out_stride + o] = result;
    }
  }
}

}  // namespace nanoserve::kernels
