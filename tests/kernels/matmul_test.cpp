// matmul for every weight type: the SIMD kernels of every Highway target this CPU runs equal
// the scalar reference, and the reference computes what the weights and activations mean.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/every_target.h"
#include "kernels/matmul.h"
#include "kernels/matmul_range.h"
#include "kernels/random_floats.h"
#include "tensor/quant.h"

namespace nanoserve::kernels {
namespace {

const std::vector<TensorType> kWeightTypes = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
    TensorType::Q6_K, TensorType::IQ4_NL, TensorType::IQ4_XS, TensorType::MXFP4};

// A weight matrix quantized from random floats; keeps its bytes and the floats they decode to.
struct TestMatrix {
  std::vector<uint8_t> bytes;
  std::vector<float> decoded;  // n_out × n_in
  Matrix m;
  TestMatrix(TensorType type, int64_t n_in, int64_t n_out, uint32_t seed) {
    const auto w = random_floats(n_in * n_out, seed, 0.05f);
    const uint64_t row_bytes = *gguf::row_bytes(type, n_in);
    bytes.resize(row_bytes * n_out);
    decoded.resize(n_in * n_out);
    for (int64_t o = 0; o < n_out; ++o) {
      tensor::quantize_row(type, w.data() + o * n_in, bytes.data() + o * row_bytes, n_in);
      tensor::dequantize_row(type, bytes.data() + o * row_bytes, decoded.data() + o * n_in, n_in);
    }
    m = {type, bytes.data(), n_in, n_out, row_bytes};
  }
};

std::string type_label(const testing::TestParamInfo<TensorType>& info) {
  return std::string(gguf::type_name(info.param));
}

class MatmulTest : public testing::TestWithParam<TensorType> {};

// The reference equals the float product of what the weights and the activations decode to:
// exactly for quantized types (integer sums), to rounding for the float types.
TEST_P(MatmulTest, ReferenceMatchesDecodedMath) {
  const int64_t n_in = 512, n_out = 9, n_rows = 3;
  TestMatrix w(GetParam(), n_in, n_out, 7);
  const auto x = random_floats(n_in * n_rows, 8);
  Activations acts;
  acts.set(x.data(), n_rows, n_in, n_in);
  std::vector<float> out(n_rows * n_out);
  matmul_reference(w.m, acts, out.data(), n_out);

  // What the activation rows decode to in the weight's vec-dot type.
  const ActType act = act_type_for(GetParam());
  for (int64_t r = 0; r < n_rows; ++r) {
    std::vector<float> a(x.begin() + r * n_in, x.begin() + (r + 1) * n_in);
    if (act == ActType::F16 || act == ActType::BF16) {
      std::vector<uint16_t> h(n_in);
      const TensorType t = act == ActType::F16 ? TensorType::F16 : TensorType::BF16;
      tensor::quantize_row(t, a.data(), h.data(), n_in);
      tensor::dequantize_row(t, h.data(), a.data(), n_in);
    } else if (act == ActType::Q8_K) {
      const Q8KRows& k = acts.q8_k();
      for (int64_t i = 0; i < n_in; ++i) a[i] = k.d[(r * n_in + i) / 256] * k.q[r * n_in + i];
    } else if (act != ActType::F32) {
      const Q8Block32Rows& b = acts.q8_block32();
      for (int64_t i = 0; i < n_in; ++i) a[i] = b.d[(r * n_in + i) / 32] * b.q[r * n_in + i];
    }
    for (int64_t o = 0; o < n_out; ++o) {
      double expected = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < n_in; ++i) {
        expected += static_cast<double>(w.decoded[o * n_in + i]) * a[i];
        magnitude += std::fabs(static_cast<double>(w.decoded[o * n_in + i]) * a[i]);
      }
      // Float rounding of the per-block scales (and Q8_1's fp16 block sums) only.
      EXPECT_NEAR(out[r * n_out + o], expected, 2e-3 * magnitude + 1e-6) << "row " << r << " out " << o;
    }
  }
}

// Every SIMD target gives the reference's result: bit for bit for quantized weights (the
// same integer sums and the same float steps), to float rounding for F32/F16/BF16.
// Quantized types: the SIMD kernels sum the same exact integer block dot products as the
// reference. The K-quants (and IQ4_XS) also add them up in the reference's float order, so
// they must be equal bit for bit; the kernels for blocks of 32 accumulate per lane, so they agree to float rounding of the sum of |w·a| (the worst
// case of reordering a float sum). Float types agree to rounding as well.
TEST_P(MatmulTest, EverySimdTargetMatchesReference) {
  const int64_t n_in = 768, n_out = 13, n_rows = 6;  // tiles of 4 activation rows and a rest
  TestMatrix w(GetParam(), n_in, n_out, 11);
  const auto x = random_floats(n_in * n_rows, 12);
  Activations acts;
  acts.set(x.data(), n_rows, n_in, n_in);
  std::vector<float> ref(n_rows * n_out), got(n_rows * n_out);
  matmul_reference(w.m, acts, ref.data(), n_out);
  const TensorType type = GetParam();
  const bool exact = act_type_for(type) == ActType::Q8_K;
  ThreadPool pool(1);
  MatmulScratch scratch(1, n_in);
  for (int64_t target : EverySimdTarget()) {
    matmul(w.m, acts, got.data(), n_out, pool, scratch);
    if (exact) {
      ASSERT_EQ(got, ref) << hwy::TargetName(target);
      continue;
    }
    for (int64_t r = 0; r < n_rows; ++r) {
      for (int64_t o = 0; o < n_out; ++o) {
        float magnitude = 0.0f;
        for (int64_t i = 0; i < n_in; ++i) magnitude += std::fabs(w.decoded[o * n_in + i] * x[r * n_in + i]);
        const size_t k = r * n_out + o;
        ASSERT_NEAR(got[k], ref[k], 1e-5f * (magnitude + 1e-3f)) << hwy::TargetName(target) << " row " << r << " out " << o;
      }
    }
  }
}

// Splitting output rows between threads changes nothing.
TEST_P(MatmulTest, ThreadsGiveIdenticalResults) {
  const int64_t n_in = 256, n_out = 31, n_rows = 5;
  TestMatrix w(GetParam(), n_in, n_out, 21);
  const auto x = random_floats(n_in * n_rows, 22);
  Activations acts;
  acts.set(x.data(), n_rows, n_in, n_in);
  std::vector<float> one(n_rows * n_out), three(n_rows * n_out);
  ThreadPool pool1(1), pool3(3);
  MatmulScratch scratch(3, n_in);
  matmul(w.m, acts, one.data(), n_out, pool1, scratch);
  matmul(w.m, acts, three.data(), n_out, pool3, scratch);
  EXPECT_EQ(one, three);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTest, testing::ValuesIn(kWeightTypes), type_label);

// At the largest products (levels ±127, a Q8_0 level of -128 written by hand, activations at
// ±127), where a saturating 16-bit sum would go wrong, every target this CPU runs (NEON on
// Arm64, the portable EMU128 everywhere) agrees with the reference. The x86 targets with
// 256-bit vectors run the same fused kernels, with VNNI's byte dot product (AVX3_DL) or its
// 16-bit emulation (AVX2, AVX3): those present must also agree bit for bit.
TEST(Matmul, EveryTargetAgreesAtExtremesAndTheFusedX86KernelsBitForBit) {
  const int64_t n_in = 1280, n_out = 7, n_rows = 70;  // 5 super-blocks, 40 blocks; row chunks 64 + 6
  std::vector<float> x(n_in * n_rows), wf(n_in * n_out);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i / 5) % 3 ? 2.0f : -2.0f;
  for (size_t i = 0; i < wf.size(); ++i) wf[i] = (i / 7) % 2 ? -0.5f : 0.5f + 0.01f * (i % 3);
  Activations acts;
  acts.set(x.data(), n_rows, n_in, n_in);
  ThreadPool pool(2);
  MatmulScratch scratch(2, n_in);
  for (TensorType type : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q5_0, TensorType::Q4_1, TensorType::Q5_1,
                          TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_NL, TensorType::MXFP4,
                          TensorType::IQ4_XS}) {
    const uint64_t row_bytes = *gguf::row_bytes(type, n_in);
    std::vector<uint8_t> bytes(row_bytes * n_out);
    for (int64_t o = 0; o < n_out; ++o)
      tensor::quantize_row(type, wf.data() + o * n_in, bytes.data() + o * row_bytes, n_in);
    if (type == TensorType::Q8_0) bytes[2] = 0x80;  // level -128 (no quantizer writes it)
    const Matrix m{type, bytes.data(), n_in, n_out, row_bytes};
    std::vector<float> first_fused, got(n_rows * n_out), ref(n_rows * n_out);
    matmul_reference(m, acts, ref.data(), n_out);
    int64_t first_fused_target = 0, targets = 0;
    for (int64_t target : EverySimdTarget()) {
      matmul(m, acts, got.data(), n_out, pool, scratch);
      ++targets;
      for (size_t k = 0; k < ref.size(); ++k)  // |w·a| sums to about 1280 per output
        ASSERT_NEAR(got[k], ref[k], 1e-5f * 1280) << gguf::type_name(type) << " " << hwy::TargetName(target);
      if (target != HWY_AVX2 && target != HWY_AVX3 && target != HWY_AVX3_DL) continue;
      if (first_fused.empty()) {
        first_fused = got;
        first_fused_target = target;
      } else {
        ASSERT_EQ(got, first_fused) << gguf::type_name(type) << ": " << hwy::TargetName(target) << " vs "
                                    << hwy::TargetName(first_fused_target);
      }
    }
    EXPECT_GE(targets, 1);
  }
}

// matmul_many splits the rows of several matrices between threads in one pass; each output
// equals what its own matmul gives, whatever the types and wherever the thread ranges fall.
TEST(Matmul, ManyMatricesEqualSeparateCalls) {
  const int64_t n_in = 512, n_rows = 5;
  TestMatrix a(TensorType::Q8_0, n_in, 37, 1), b(TensorType::Q4_K, n_in, 5, 2), c(TensorType::F16, n_in, 19, 3);
  const auto x = random_floats(n_in * n_rows, 4);
  Activations acts;
  acts.set(x.data(), n_rows, n_in, n_in);
  ThreadPool pool(3);
  MatmulScratch scratch(3, n_in);
  std::vector<float> one_a(n_rows * 37), one_b(n_rows * 5), one_c(n_rows * 19);
  matmul(a.m, acts, one_a.data(), 37, pool, scratch);
  matmul(b.m, acts, one_b.data(), 5, pool, scratch);
  matmul(c.m, acts, one_c.data(), 19, pool, scratch);
  std::vector<float> many_a(one_a.size()), many_b(one_b.size()), many_c(one_c.size());
  matmul_many({{&a.m, many_a.data(), 37}, {&b.m, many_b.data(), 5}, {&c.m, many_c.data(), 19}}, acts, pool, scratch);
  EXPECT_EQ(many_a, one_a);
  EXPECT_EQ(many_b, one_b);
  EXPECT_EQ(many_c, one_c);
}

// Each of `rows` activation rows of x multiplied alone (decode) by m, whose weights decode to
// w's: into `alone`, each output the reference's to float rounding.
void rows_alone_near_reference(const TestMatrix& w, const Matrix& m, const std::vector<float>& x, int64_t rows,
                               const std::vector<float>& ref, ThreadPool& pool, MatmulScratch& scratch,
                               std::vector<float>& alone, const std::string& where) {
  const int64_t n_in = m.n_in, n_out = m.n_out;
  Activations acts;
  for (int64_t r = 0; r < rows; ++r) {
    acts.set(x.data() + r * n_in, 1, n_in, n_in);
    matmul(m, acts, alone.data() + r * n_out, n_out, pool, scratch);
    for (int64_t o = 0; o < n_out; ++o) {
      float magnitude = 0.0f;
      for (int64_t i = 0; i < n_in; ++i) magnitude += std::fabs(w.decoded[o * n_in + i] * x[r * n_in + i]);
      ASSERT_NEAR(alone[r * n_out + o], ref[r * n_out + o], 1e-5f * (magnitude + 1e-3f)) << where;
    }
  }
}

// Float weights: a row's result is the same whether it is computed alone (decode's tiles of
// eight weight rows) or in a batch of any size (tiles of four, with up to six activation rows),
// on every target, also for rows that do not fill whole cache lines; and it is the reference's
// result to float rounding.
TEST(Matmul, FloatWeightsGiveARowTheSameResultAloneOrInABatch) {
  const int64_t n_in = 200, n_out = 21, max_rows = 13;
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
    TestMatrix w(type, n_in, n_out, 31);
    const auto x = random_floats(n_in * max_rows, 32);
    Activations acts;
    acts.set(x.data(), max_rows, n_in, n_in);
    std::vector<float> ref(max_rows * n_out), alone(max_rows * n_out), got(max_rows * n_out);
    matmul_reference(w.m, acts, ref.data(), n_out);
    ThreadPool pool(2);
    MatmulScratch scratch(2, n_in);
    for (int64_t target : EverySimdTarget()) {
      const std::string where = std::string(gguf::type_name(type)) + " " + hwy::TargetName(target);
      ASSERT_NO_FATAL_FAILURE(rows_alone_near_reference(w, w.m, x, max_rows, ref, pool, scratch, alone, where));
      for (int64_t rows = 2; rows <= max_rows; ++rows) {
        acts.set(x.data(), rows, n_in, n_in);
        matmul(w.m, acts, got.data(), n_out, pool, scratch);
        for (int64_t k = 0; k < rows * n_out; ++k) ASSERT_EQ(got[k], alone[k]) << where << " batch of " << rows;
      }
    }
  }
}

TEST(Matmul, RejectsMismatchedShapesAndTypes) {
  TestMatrix w(TensorType::Q8_0, 64, 2, 1);
  const auto x = random_floats(32, 2);
  Activations acts;
  acts.set(x.data(), 1, 32, 32);
  std::vector<float> out(2);
  EXPECT_THROW(matmul_reference(w.m, acts, out.data(), 2), std::invalid_argument);
  EXPECT_THROW(act_type_for(TensorType::IQ2_XXS), std::invalid_argument);
}

}  // namespace
}  // namespace nanoserve::kernels

namespace nanoserve::kernels {
namespace {

// packed (a copy of w) interleaved in place, once only; then every row unpacks to w's bytes.
void interleave_and_unpack_rows(const TestMatrix& w, TestMatrix& packed, ThreadPool& pool) {
  packed.m.data = packed.bytes.data();
  ASSERT_TRUE(can_interleave(packed.m));
  interleave_rows(packed.m, pool);
  EXPECT_TRUE(packed.m.interleaved);
  EXPECT_FALSE(can_interleave(packed.m));  // never twice
  EXPECT_NE(packed.bytes, w.bytes);
  DecodedRow row;
  row.reserve(w.m.n_in);
  for (int64_t o = 0; o < w.m.n_out; ++o) {
    const uint8_t* got = weight_row(packed.m, o, row);
    ASSERT_TRUE(std::equal(got, got + w.m.row_bytes, w.bytes.data() + o * w.m.row_bytes)) << "row " << o;
  }
}

// A matrix interleaved by 8 rows, its groups in pairs (40 rows: two pairs and a last group
// alone), gives on every target and for any split of its rows (whole pairs, a pair's second
// group alone, groups cut by the range) exactly the reference result of the matrix as stored
// in the file, also with extreme levels; and every row unpacks to the file's bytes.
class InterleavedMatmul : public ::testing::TestWithParam<TensorType> {};

TEST_P(InterleavedMatmul, EqualsReferenceOnEveryTarget) {
  const TensorType type = GetParam();
  const bool k_quant = type == TensorType::Q4_K || type == TensorType::Q6_K || type == TensorType::IQ4_XS;
  const int64_t n_in = k_quant ? 512 : 320, n_out = 40;
  TestMatrix w(type, n_in, n_out, 31);
  const auto row_at = [&](int64_t o) { return w.bytes.begin() + o * w.m.row_bytes; };
  if (type == TensorType::Q8_0) {
    w.bytes[5 * w.m.row_bytes + 2] = 0x80;  // row 5, block 0: a level of -128
    w.bytes[29 * w.m.row_bytes + 40] = 0x7f;
  } else if (type == TensorType::Q4_K) {  // row 5, block 0: levels 0; row 29: scales, mins, levels at the top
    std::fill(row_at(5) + 16, row_at(5) + 144, 0);
    std::fill(row_at(29) + 4, row_at(29) + 144, 0xff);
  } else if (type == TensorType::Q6_K) {  // block 0: row 5's levels at the bottom, 29's at the top, scales -128 and 127
    std::fill(row_at(5), row_at(5) + 192, 0);
    std::fill(row_at(5) + 192, row_at(5) + 208, 0x80);
    std::fill(row_at(29), row_at(29) + 192, 0xff);
    std::fill(row_at(29) + 192, row_at(29) + 208, 0x7f);
  } else {  // block 0 (row_bytes / 10 bytes) of rows 5 and 29: every level at the bottom, at the top
    std::fill(row_at(5) + 2, row_at(5) + w.m.row_bytes / 10, 0);
    std::fill(row_at(29) + 2, row_at(29) + w.m.row_bytes / 10, 0xff);
  }
  if (type == TensorType::MXFP4) {  // the exponents whose scales are subnormal, and a large one
    row_at(5)[0] = 0;
    row_at(29)[0] = 1;
    row_at(13)[sizeof(tensor::BlockMXFP4)] = 200;
  }
  TestMatrix packed = w;
  ThreadPool pool(1);
  ASSERT_NO_FATAL_FAILURE(interleave_and_unpack_rows(w, packed, pool));

  for (int64_t n_rows : {1, 2, 3, 4, 5, 8, 9, 10, 11, 21, 70}) {  // decode, every tile kind, split tiles, chunks
    const auto x = random_floats(n_in * n_rows, 32 + n_rows);
    Activations acts;
    acts.set(x.data(), n_rows, n_in, n_in);
    std::vector<float> ref(n_rows * n_out), got(n_rows * n_out);
    matmul_reference(w.m, acts, ref.data(), n_out);
    std::vector<float> via_reference(n_rows * n_out);
    matmul_reference(packed.m, acts, via_reference.data(), n_out);
    ASSERT_EQ(via_reference, ref);
    for (int64_t target : EverySimdTarget()) {
      for (int threads : {1, 3}) {  // 3 threads: ranges of 16 rows
        ThreadPool p(threads);
        MatmulScratch scratch(threads, n_in);
        matmul(packed.m, acts, got.data(), n_out, p, scratch);
        ASSERT_EQ(got, ref) << hwy::TargetName(target) << " rows " << n_rows << " threads " << threads;
      }
      // Ranges that cut groups and pairs: rows 3..37 (a cut group, the second group of a pair,
      // a whole pair, a cut last group), rows 8..40 (from a pair's second group to the end),
      // rows 0..24 (a whole pair, then the first group of the next alone).
      for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{3, 37}, {8, 40}, {0, 24}}) {
        MatmulScratch scratch(1, n_in);
        std::fill(got.begin(), got.end(), -1.0f);
        acts.prepare(ActType::Q8_0);
        matmul_range_simd({&packed.m, &acts, got.data(), n_out}, begin, end, scratch.row(0), scratch.groups(0),
                          scratch.fused(0));
        for (int64_t r = 0; r < n_rows; ++r)
          for (int64_t o = 0; o < n_out; ++o)
            ASSERT_EQ(got[r * n_out + o], o >= begin && o < end ? ref[r * n_out + o] : -1.0f)
                << hwy::TargetName(target) << " row " << r << " out " << o << " range " << begin;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, InterleavedMatmul,
                         ::testing::Values(TensorType::Q8_0, TensorType::Q5_0, TensorType::Q4_0, TensorType::Q4_K,
                                           TensorType::Q6_K, TensorType::IQ4_NL, TensorType::MXFP4,
                                           TensorType::IQ4_XS),
                         [](const auto& info) { return std::string(gguf::type_name(info.param)); });

}  // namespace
}  // namespace nanoserve::kernels

namespace nanoserve::kernels {
namespace {

// Float weights interleaved by 8 rows (kernels/float_panels-inl.h; 40 rows: two pairs and a last
// group alone; an odd row length, so the even chain has the last element): every row unpacks to
// the file's bytes; on every target each output is the reference's to float rounding, and the
// same bits whatever the tile it is computed in: a row alone (decode), in a batch of any size
// (prefill, a verify step), any number of threads, ranges that cut groups and pairs.
TEST(InterleavedFloatMatmul, ARowGivesTheSameBitsInEveryTileAndTheReferenceToRounding) {
  const int64_t n_in = 201, n_out = 40, max_rows = 70;
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
    TestMatrix w(type, n_in, n_out, 41);
    TestMatrix packed = w;
    ThreadPool pool(1);
    ASSERT_NO_FATAL_FAILURE(interleave_and_unpack_rows(w, packed, pool));
    const auto x = random_floats(n_in * max_rows, 42);
    Activations acts;
    acts.set(x.data(), max_rows, n_in, n_in);
    std::vector<float> ref(max_rows * n_out), alone(max_rows * n_out), got(max_rows * n_out);
    matmul_reference(w.m, acts, ref.data(), n_out);
    for (int64_t target : EverySimdTarget()) {
      const std::string where = std::string(gguf::type_name(type)) + " " + hwy::TargetName(target);
      MatmulScratch scratch(3, n_in);
      ASSERT_NO_FATAL_FAILURE(
          rows_alone_near_reference(w, packed.m, x, max_rows, ref, pool, scratch, alone, where));
      for (int64_t rows : {2, 3, 4, 5, 7, 8, 9, 13, 64, 65, 70}) {
        acts.set(x.data(), rows, n_in, n_in);
        for (int threads : {1, 3}) {
          ThreadPool p(threads);
          std::fill(got.begin(), got.end(), -1.0f);
          matmul(packed.m, acts, got.data(), n_out, p, scratch);
          for (int64_t k = 0; k < rows * n_out; ++k)
            ASSERT_EQ(got[k], alone[k]) << where << " batch of " << rows << ", " << threads << " threads";
        }
        for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{3, 37}, {8, 40}, {0, 24}, {17, 18}}) {
          std::fill(got.begin(), got.end(), -1.0f);
          acts.prepare(act_type_for(type));
          matmul_range_simd({&packed.m, &acts, got.data(), n_out}, begin, end, scratch.row(0), scratch.groups(0),
                            scratch.fused(0));
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t o = 0; o < n_out; ++o)
              ASSERT_EQ(got[r * n_out + o], o >= begin && o < end ? alone[r * n_out + o] : -1.0f)
                  << where << " row " << r << " out " << o << " range " << begin << ".." << end;
        }
      }
    }
  }
}

// Where the CPU multiplies BF16 pairs (vdpbf16ps), interleaved BF16 weights take that path; the
// float path (BF16 widened) is the portable one. Both give each output the reference's value to
// float rounding of the sum of |w·a|, on a shape with a last group alone, an odd row length and
// batches of every tile size.
TEST(InterleavedFloatMatmul, BF16PairsAgreeWithTheFloatPath) {
  if (!bf16_pair_dots()) GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  const int64_t n_in = 201, n_out = 40;
  TestMatrix w(TensorType::BF16, n_in, n_out, 51);
  TestMatrix packed = w;
  ThreadPool pool(1);
  ASSERT_NO_FATAL_FAILURE(interleave_and_unpack_rows(w, packed, pool));
  int64_t differ = 0;  // the two paths add in other orders: some outputs' last bits differ
  for (int64_t rows : {1, 3, 8, 9, 70}) {
    const auto x = random_floats(n_in * rows, 52 + rows);
    Activations acts;
    acts.set(x.data(), rows, n_in, n_in);
    std::vector<float> pairs(rows * n_out), floats(rows * n_out);
    MatmulScratch scratch(1, n_in);
    matmul(packed.m, acts, pairs.data(), n_out, pool, scratch);
    set_bf16_pair_dots(false);
    acts.set(x.data(), rows, n_in, n_in);
    matmul(packed.m, acts, floats.data(), n_out, pool, scratch);
    set_bf16_pair_dots(true);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < n_out; ++o) {
        float magnitude = 0.0f;
        for (int64_t i = 0; i < n_in; ++i) magnitude += std::fabs(w.decoded[o * n_in + i] * x[r * n_in + i]);
        ASSERT_NEAR(pairs[r * n_out + o], floats[r * n_out + o], 2e-6f * magnitude) << "row " << r << " out " << o;
        differ += pairs[r * n_out + o] != floats[r * n_out + o] ? 1 : 0;
      }
    }
  }
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace nanoserve::kernels
