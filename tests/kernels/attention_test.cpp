// The attention kernels (F16 and Q8_0 caches) against plain double-precision math, and every
// SIMD target against the scalar reference.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/activations.h"
#include "kernels/attention.h"
#include "kernels/every_target.h"
#include "kernels/random_floats.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

// A layer's cache in KvView's layout and type, built from position-major rows (n_kv rows of
// every KV head's head_dim values, `stride` values a row): positions in blocks of block_size,
// block i of the sequence at pool block order[i], in groups of two blocks; in a group, each KV
// head's tiles in a run of their own, with a gap after every tile, run and group. Every byte no
// position fills is 0xFF (an F16 NaN; in a Q8_0 tile, a NaN scale), so a kernel that lets one
// into a result fails. Each position stored as the cache stores it (kv_store).
struct PagedKv {
  std::vector<uint8_t> k, v;
  std::vector<int32_t> blocks;
  KvView view;

  PagedKv(const std::vector<float>& kf, const std::vector<float>& vf, int64_t stride, int64_t head_dim, int64_t n_kv,
          int64_t block_size, std::vector<int32_t> order, KvType type = KvType::F16)
      : blocks(std::move(order)) {
    const int64_t tile = kv_tile_bytes(type, head_dim, block_size);
    const int64_t block_stride = tile + 6, group_blocks = 2;
    const int64_t head_stride = group_blocks * block_stride + 10;
    const int64_t group_stride = stride / head_dim * head_stride + 14;
    const int64_t groups = (static_cast<int64_t>(blocks.size()) + group_blocks - 1) / group_blocks;
    k.assign(groups * group_stride, 0xFF);
    v.assign(groups * group_stride, 0xFF);
    view = {k.data(), v.data(), blocks.data(), block_size, block_stride, head_stride, group_blocks, group_stride, type};
    for (int64_t p = 0; p < n_kv; ++p) {
      const int64_t block = kv_block_offset(view, blocks[p / block_size]), slot = p % block_size;
      for (int64_t h = 0; h < stride / head_dim; ++h)
        kv_store(type, k.data() + block + h * head_stride, v.data() + block + h * head_stride, slot,
                 kf.data() + p * stride + h * head_dim, vf.data() + p * stride + h * head_dim, head_dim, block_size);
    }
  }
};

// What a cache of this type holds for these floats (and what a query becomes against it):
// F16-rounded, or Q8_0-quantized as the cache quantizes (quantize_q8_block32) and decoded.
std::vector<float> as_stored(std::vector<float> x, int64_t head_dim, KvType type) {
  if (type == KvType::F16) {
    for (auto& f : x) f = tensor::f16_to_f32(tensor::f32_to_f16(f));
    return x;
  }
  std::vector<int8_t> levels(head_dim);
  std::vector<uint8_t> unsigned_levels(head_dim);
  std::vector<float> scales(head_dim / kKvQ8Block), sums(head_dim / kKvQ8Block);
  std::vector<int32_t> minus_128_sums(head_dim / kKvQ8Block);
  for (size_t row = 0; row < x.size(); row += head_dim) {
    quantize_q8_block32(x.data() + row, head_dim, levels.data(), scales.data(), sums.data(), unsigned_levels.data(),
                        minus_128_sums.data());
    for (int64_t i = 0; i < head_dim; ++i) x[row + i] = levels[i] * scales[i / kKvQ8Block];
  }
  return x;
}

// The weighted sum of value i of a Q8_0 cache's values as attention_heads defines it, in double:
// each position's values (v_in's row p at p * stride + offset) quantized as the cache stores
// them; per chunk of a block's slots, the weights times their values' scales (block i / 32) as
// bytes against the chunk's largest (level = round(x * 255 / largest)), their sum times the
// value levels times largest / 255; over the sum of the weights (w: the unnormalized ones).
double q8_0_weighted_value(const std::vector<double>& w, const std::vector<float>& v_in, int64_t stride,
                           int64_t offset, int head_dim, int64_t block_size, int i) {
  const auto n_kv = static_cast<int64_t>(w.size());
  std::vector<int8_t> levels(head_dim * n_kv);
  std::vector<uint8_t> unsigned_levels(head_dim);
  std::vector<float> scales(head_dim / kKvQ8Block), sums(head_dim / kKvQ8Block);
  std::vector<int32_t> minus_128_sums(head_dim / kKvQ8Block);
  std::vector<double> scale_of(n_kv);
  for (int64_t p = 0; p < n_kv; ++p) {
    quantize_q8_block32(v_in.data() + p * stride + offset, head_dim, levels.data() + p * head_dim, scales.data(),
                        sums.data(), unsigned_levels.data(), minus_128_sums.data());
    scale_of[p] = tensor::f16_to_f32(tensor::f32_to_f16(scales[i / kKvQ8Block]));
  }
  double out = 0, sum = 0;
  for (int64_t block = 0; block < n_kv; block += block_size)
    for (int64_t c = block; c < std::min(block + block_size, n_kv); c += kKvQ8Chunk) {
      const int64_t end = std::min({c + kKvQ8Chunk, block + block_size, n_kv});
      double largest = 0;
      for (int64_t p = c; p < end; ++p) largest = std::max(largest, w[p] * scale_of[p]);
      double dot = 0;
      for (int64_t p = c; p < end; ++p) dot += std::nearbyint(w[p] * scale_of[p] * 255 / largest) * levels[p * head_dim + i];
      out += dot * largest / 255;
    }
  for (double x : w) sum += x;
  return out / sum;
}

// How near a SIMD target's result is to the reference's: float rounding; from a Q8_0 cache also
// a weight's byte one level off where Highway's Exp and std::exp differ in their last bit at a
// rounding boundary (one level of a chunk's largest weight, over the sum of ~300 weights here).
float tolerance_against_reference(KvType type) { return type == KvType::F16 ? 1e-5f : 1e-4f; }

std::vector<int32_t> in_order(int64_t n_kv, int64_t block_size) {
  std::vector<int32_t> order((n_kv + block_size - 1) / block_size);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  return order;
}

// The reference over each type's cache: Q8_0 keys and values are their levels times their
// block's scale, and the query is quantized to Q8_0 against Q8_0 keys (as llama.cpp's flash
// attention does).
TEST(Attention, ReferenceMatchesSoftmaxWeightedValues) {
  for (KvType type : {KvType::F16, KvType::Q8_0}) {
    const int head_dim = 32, n_kv_heads = 2, n_kv = 23, block_size = 4;
    const int64_t stride = head_dim * n_kv_heads;
    const auto k_in = random_floats(stride * n_kv, 4), v_in = random_floats(stride * n_kv, 5);
    const PagedKv kv(k_in, v_in, stride, head_dim, n_kv, block_size, {3, 0, 5, 1, 4, 2}, type);
    const auto kf = as_stored(k_in, head_dim, type), vf = as_stored(v_in, head_dim, type);  // what the cache holds
    const auto q_in = random_floats(head_dim, 6);
    const auto q = type == KvType::Q8_0 ? as_stored(q_in, head_dim, type) : q_in;  // what the dot products take
    std::vector<float> scores(n_kv), out(head_dim);
    const float scale = 0.25f;
    attention_heads_reference(q_in.data(), 1, 1, kv.view, 1, head_dim, n_kv, scale, scores.data(), out.data());

    std::vector<double> w(n_kv);
    double max = -1e30, sum = 0;
    for (int p = 0; p < n_kv; ++p) {
      double dot = 0;
      for (int i = 0; i < head_dim; ++i) dot += q[i] * double(kf[p * stride + head_dim + i]);
      w[p] = dot * scale;
      max = std::max(max, w[p]);
    }
    for (auto& x : w) sum += (x = std::exp(x - max));
    for (int i = 0; i < head_dim; ++i) {
      double expected = 0;
      for (int p = 0; p < n_kv; ++p) expected += w[p] / sum * vf[p * stride + head_dim + i];
      if (type == KvType::Q8_0) {
        // The weights' bytes move the sum by about 1/510 of a chunk's largest weight each.
        EXPECT_NEAR(out[i], expected, 2e-3) << "q8_0, weights unquantized";
        expected = q8_0_weighted_value(w, v_in, stride, head_dim, head_dim, block_size, i);
      }
      EXPECT_NEAR(out[i], expected, 1e-5) << kv_type_name(type);
    }
  }
}

// Every SIMD target against the reference, for head sizes with and without a vector tail;
// groups of query heads that take two chains per score, one, and more than a pass of the SIMD
// kernel holds (16 heads of one chain where there are 32 registers, 8 else); blocks of the
// cache's 16 positions (whole vectors), of 8 (narrower than an AVX-512 vector: one by one
// there) and of 5; over a number of positions that leaves the last block part-filled; for each
// type of cache (Q8_0: head sizes of whole blocks of 32).
TEST(Attention, EverySimdTargetMatchesReference) {
  for (KvType type : {KvType::F16, KvType::Q8_0})
    for (int block_size : {16, 8, 5})
      for (int head_dim : {64, 80, 128, 7})
        for (int n_q : {1, 7, 10, 17}) {
          if (type == KvType::Q8_0 && head_dim % kKvQ8Block != 0) continue;
          const int n_kv = 301;
          const int64_t stride = 2 * head_dim;
          const PagedKv kv(random_floats(stride * n_kv, 7), random_floats(stride * n_kv, 8), stride, head_dim, n_kv,
                           block_size, in_order(n_kv, block_size), type);
          const auto q = random_floats(head_dim * n_q, 9);
          std::vector<float> scores(n_kv * n_q), ref(head_dim * n_q), got(head_dim * n_q);
          attention_heads_reference(q.data(), 1, n_q, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), ref.data());
          for (int64_t target : EverySimdTarget()) {
            attention_heads(q.data(), 1, n_q, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
            for (int i = 0; i < head_dim * n_q; ++i)
              ASSERT_NEAR(got[i], ref[i], tolerance_against_reference(type)) << hwy::TargetName(target) << " " << kv_type_name(type) << " block "
                                                 << block_size << " head_dim "
                                                 << head_dim << " heads " << n_q << " i " << i;
          }
        }
}

// A sequence's rows at consecutive positions (a verify step's, a prompt chunk's) in one call:
// each row's heads give the same bits as that row alone (its positions only, the later rows'
// not), on every SIMD target, for groups of heads that take two chains per score and one, and
// rows enough to fill several passes; and the reference's result to float rounding. Each type
// of cache.
TEST(Attention, RowsOfASequenceInOnePassGiveEachRowItsOwnBits) {
  for (KvType type : {KvType::F16, KvType::Q8_0})
    for (int block_size : {16, 5})
      for (int head_dim : {64, 7})
        for (int heads_per_row : {1, 4, 7})
          for (int n_rows : {2, 3, 5}) {
            if (type == KvType::Q8_0 && head_dim % kKvQ8Block != 0) continue;
            const int n_kv = 37, positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
            const int64_t stride = 2 * head_dim;
            const PagedKv kv(random_floats(stride * positions, 31), random_floats(stride * positions, 32), stride,
                             head_dim, positions, block_size, in_order(positions, block_size), type);
            const auto q = random_floats(head_dim * n_q, 33);
            std::vector<float> scores(n_q * positions), ref(head_dim * n_q), together(head_dim * n_q),
                alone(head_dim * heads_per_row);
            attention_heads_reference(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f,
                                      scores.data(), ref.data());
            for (int64_t target : EverySimdTarget()) {
              attention_heads(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                              together.data());
              for (int i = 0; i < head_dim * n_q; ++i)
                ASSERT_NEAR(together[i], ref[i], tolerance_against_reference(type)) << hwy::TargetName(target) << " i " << i;
              for (int r = 0; r < n_rows; ++r) {
                const int64_t first = int64_t{r} * heads_per_row * head_dim;
                attention_heads(q.data() + first, 1, heads_per_row, kv.view, 1, head_dim, n_kv + r, 0.125f,
                                scores.data(), alone.data());
                ASSERT_TRUE(std::equal(alone.begin(), alone.end(), together.begin() + first))
                    << hwy::TargetName(target) << " " << kv_type_name(type) << " block " << block_size << " head_dim "
                    << head_dim << " heads "
                    << heads_per_row << " rows " << n_rows << " row " << r;
              }
            }
          }
}

// A sliding window (Gemma's local layers): a row sees only its last `window` positions, as if
// the cache held just those; on every SIMD target too, and rows together give each row's own
// bits. Windows of one position, inside the first block, across blocks, and wider than all.
TEST(Attention, SlidingWindowSeesOnlyTheLastPositions) {
  for (KvType type : {KvType::F16, KvType::Q8_0}) {
    const int head_dim = 64, heads_per_row = 2, n_kv = 30, n_rows = 3, block_size = 16;
    const int positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
    const int64_t stride = 2 * head_dim;
    const auto kf = random_floats(stride * positions, 41), vf = random_floats(stride * positions, 42);
    const PagedKv kv(kf, vf, stride, head_dim, positions, block_size, in_order(positions, block_size), type);
    const auto q = random_floats(head_dim * n_q, 43);
    for (int64_t window : {1, 7, 20, 31, 100}) {
      std::vector<float> scores(n_q * positions), ref(head_dim * n_q), got(head_dim * n_q),
          row(head_dim * heads_per_row);
      attention_heads_reference(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                                ref.data(), window);
      for (int r = 0; r < n_rows; ++r) {  // row r over a cache of only its window's positions
        const int64_t sees = n_kv + r, start = window_start(sees, window);
        const std::vector<float> kw(kf.begin() + start * stride, kf.begin() + sees * stride),
            vw(vf.begin() + start * stride, vf.begin() + sees * stride);
        const PagedKv cut(kw, vw, stride, head_dim, sees - start, block_size, in_order(sees - start, block_size), type);
        attention_heads_reference(q.data() + r * heads_per_row * head_dim, 1, heads_per_row, cut.view, 1, head_dim,
                                  sees - start, 0.125f, scores.data(), row.data());
        // A Q8_0 cache's weights are made bytes chunk by chunk of the blocks' slots, and the cut
        // cache's chunks start elsewhere: as near as two quantizations of them are (each weight
        // within 1/510 of its chunk's largest, over a window of a few to 20 weights; a wrong
        // position would move it by ~0.1).
        const float near = type == KvType::F16 ? 1e-6f : 5e-3f;
        for (int i = 0; i < head_dim * heads_per_row; ++i)
          ASSERT_NEAR(ref[r * heads_per_row * head_dim + i], row[i], near)
              << kv_type_name(type) << " window " << window << " row " << r;
      }
      for (int64_t target : EverySimdTarget()) {
        attention_heads(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data(),
                        window);
        for (int i = 0; i < head_dim * n_q; ++i)
          ASSERT_NEAR(got[i], ref[i], tolerance_against_reference(type))
              << hwy::TargetName(target) << " window " << window << " i " << i;
        for (int r = 0; r < n_rows; ++r) {
          attention_heads(q.data() + r * heads_per_row * head_dim, 1, heads_per_row, kv.view, 1, head_dim, n_kv + r,
                          0.125f, scores.data(), row.data(), window);
          ASSERT_TRUE(std::equal(row.begin(), row.end(), got.begin() + r * heads_per_row * head_dim))
              << hwy::TargetName(target) << " " << kv_type_name(type) << " window " << window << " row " << r;
        }
      }
    }
  }
}

// Attention sinks (gpt-oss): each head's learned logit joins its softmax's denominator with no
// value, so the weights sum to less than 1. Against plain double math (an F16 cache) with sinks
// below, among and above the scores (then the sink is the max the exponentials subtract), with
// and without a sliding window, several rows of a sequence at once; every SIMD target against
// the reference for each type of cache; and each row's bits the same alone as together.
TEST(Attention, SinksJoinTheSoftmaxDenominator) {
  const int head_dim = 64, heads_per_row = 4, n_kv = 40, n_rows = 3, block_size = 16;
  const int positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
  const int64_t stride = 2 * head_dim;
  const auto k_in = random_floats(stride * positions, 51), v_in = random_floats(stride * positions, 52);
  const auto q = random_floats(head_dim * n_q, 53);
  const std::vector<float> sinks = {-3.0f, 0.0f, 0.5f, 6.0f};
  const float scale = 0.125f;
  for (int64_t window : {0, 9}) {
    const PagedKv kv(k_in, v_in, stride, head_dim, positions, block_size, in_order(positions, block_size));
    const auto kf = as_stored(k_in, head_dim, KvType::F16), vf = as_stored(v_in, head_dim, KvType::F16);
    std::vector<float> scores(n_q * positions), ref(head_dim * n_q), got(head_dim * n_q), row(head_dim * heads_per_row);
    attention_heads_reference(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, scale, scores.data(),
                              ref.data(), window, sinks.data());
    for (int h = 0; h < n_q; ++h) {
      const int64_t sees = n_kv + h / heads_per_row, start = window_start(sees, window);
      const double sink = sinks[h % heads_per_row];
      std::vector<double> w(sees, 0.0);
      double max = sink;
      for (int64_t p = start; p < sees; ++p) {
        double dot = 0;
        for (int i = 0; i < head_dim; ++i) dot += double(q[h * head_dim + i]) * kf[p * stride + head_dim + i];
        max = std::max(max, w[p] = dot * scale);
      }
      double sum = std::exp(sink - max);
      for (int64_t p = start; p < sees; ++p) sum += (w[p] = std::exp(w[p] - max));
      for (int i = 0; i < head_dim; ++i) {
        double expected = 0;
        for (int64_t p = start; p < sees; ++p) expected += w[p] / sum * vf[p * stride + head_dim + i];
        ASSERT_NEAR(ref[h * head_dim + i], expected, 1e-5) << "window " << window << " head " << h << " i " << i;
      }
    }
    for (KvType type : {KvType::F16, KvType::Q8_0}) {
      const PagedKv typed(k_in, v_in, stride, head_dim, positions, block_size, in_order(positions, block_size), type);
      attention_heads_reference(q.data(), n_rows, heads_per_row, typed.view, 1, head_dim, n_kv, scale, scores.data(),
                                ref.data(), window, sinks.data());
      for (int64_t target : EverySimdTarget()) {
        attention_heads(q.data(), n_rows, heads_per_row, typed.view, 1, head_dim, n_kv, scale, scores.data(),
                        got.data(), window, sinks.data());
        for (int i = 0; i < head_dim * n_q; ++i)
          ASSERT_NEAR(got[i], ref[i], tolerance_against_reference(type))
              << hwy::TargetName(target) << " " << kv_type_name(type) << " window " << window << " i " << i;
        for (int r = 0; r < n_rows; ++r) {
          attention_heads(q.data() + r * heads_per_row * head_dim, 1, heads_per_row, typed.view, 1, head_dim, n_kv + r,
                          scale, scores.data(), row.data(), window, sinks.data());
          ASSERT_TRUE(std::equal(row.begin(), row.end(), got.begin() + r * heads_per_row * head_dim))
              << hwy::TargetName(target) << " " << kv_type_name(type) << " window " << window << " row " << r;
        }
      }
    }
  }
}

// A windowed cache (model::KvWindow) has let go of the blocks wholly before the first row's
// window, and others' keys and values may lie there: the kernels read none of them. Those
// blocks' bytes are 0xFF here (F16 NaNs, Q8_0 NaN scales), which any read would carry into the
// output; the result's bits equal those over a cache with every position in place, for the
// reference and every SIMD target, and each type of cache.
TEST(Attention, SlidingWindowReadsNoBlockBeforeIt) {
  for (KvType type : {KvType::F16, KvType::Q8_0}) {
    const int head_dim = 64, heads_per_row = 2, n_kv = 70, n_rows = 3, block_size = 16;
    const int positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
    const int64_t stride = 2 * head_dim, window = 20;
    const int64_t gone = window_start(n_kv, window) / block_size * block_size;  // 48: blocks 0-2
    const auto kf = random_floats(stride * positions, 51), vf = random_floats(stride * positions, 52);
    const PagedKv whole(kf, vf, stride, head_dim, positions, block_size, in_order(positions, block_size), type);
    PagedKv windowed(kf, vf, stride, head_dim, positions, block_size, in_order(positions, block_size), type);
    const int64_t tile = kv_tile_bytes(type, head_dim, block_size);
    for (int64_t b = 0; b < gone / block_size; ++b)
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t at = kv_block_offset(windowed.view, windowed.blocks[b]) + h * windowed.view.head_stride;
        std::fill_n(windowed.k.begin() + at, tile, 0xFF);
        std::fill_n(windowed.v.begin() + at, tile, 0xFF);
      }
    const auto q = random_floats(head_dim * n_q, 53);
    std::vector<float> scores(n_q * positions), want(head_dim * n_q), got(head_dim * n_q);
    attention_heads_reference(q.data(), n_rows, heads_per_row, whole.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                              want.data(), window);
    attention_heads_reference(q.data(), n_rows, heads_per_row, windowed.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                              got.data(), window);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "reference " << kv_type_name(type);
    for (int64_t target : EverySimdTarget()) {
      attention_heads(q.data(), n_rows, heads_per_row, whole.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                      want.data(), window);
      attention_heads(q.data(), n_rows, heads_per_row, windowed.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                      got.data(), window);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << hwy::TargetName(target) << " "
                                                                   << kv_type_name(type);
    }
  }
}

// Where the blocks lie in the pool does not change a result by a bit: the same positions in
// shuffled blocks (the last part-filled) and in blocks in order, for the reference and every
// SIMD target, and each type of cache.
TEST(Attention, BlockOrderDoesNotChangeTheResult) {
  for (KvType type : {KvType::F16, KvType::Q8_0}) {
    const int head_dim = 64, n_kv = 45, block_size = 16;
    const int64_t stride = 2 * head_dim;
    const auto kf = random_floats(stride * n_kv, 11), vf = random_floats(stride * n_kv, 12);
    const PagedKv ordered(kf, vf, stride, head_dim, n_kv, block_size, in_order(n_kv, block_size), type);
    const PagedKv shuffled(kf, vf, stride, head_dim, n_kv, block_size, {2, 0, 1}, type);
    const auto q = random_floats(head_dim * 3, 13);
    std::vector<float> scores(n_kv * 3), want(head_dim * 3), got(head_dim * 3);
    attention_heads_reference(q.data(), 1, 3, ordered.view, 1, head_dim, n_kv, 0.125f, scores.data(), want.data());
    attention_heads_reference(q.data(), 1, 3, shuffled.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
    EXPECT_EQ(got, want);
    for (int64_t target : EverySimdTarget()) {
      attention_heads(q.data(), 1, 3, ordered.view, 1, head_dim, n_kv, 0.125f, scores.data(), want.data());
      attention_heads(q.data(), 1, 3, shuffled.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
      EXPECT_EQ(got, want) << hwy::TargetName(target) << " " << kv_type_name(type);
    }
  }
}

}  // namespace
}  // namespace nanoserve::kernels
