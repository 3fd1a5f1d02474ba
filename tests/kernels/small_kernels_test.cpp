// RMSNorm, RoPE, attention and the element-wise kernels against plain double-precision math.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/attention.h"
#include "kernels/every_target.h"
#include "kernels/gelu.h"
#include "kernels/norm.h"
#include "kernels/ops.h"
#include "kernels/rope.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(RmsNorm, MatchesDefinition) {
  const auto x = random_floats(300, 1), w = random_floats(300, 2);
  std::vector<float> y(300);
  rms_norm(x.data(), w.data(), y.data(), 300, 1e-5f);
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double inv = 1.0 / std::sqrt(ss / 300 + 1e-5);
  for (int i = 0; i < 300; ++i) EXPECT_NEAR(y[i], x[i] * inv * w[i], 1e-5);
  std::vector<float> inplace = x;
  rms_norm(inplace.data(), w.data(), inplace.data(), 300, 1e-5f);
  EXPECT_EQ(inplace, y);
}

TEST(LayerNorm, MatchesDefinition) {
  const auto x = random_floats(300, 3), w = random_floats(300, 4), b = random_floats(300, 5);
  std::vector<float> y(300);
  layer_norm(x.data(), w.data(), b.data(), y.data(), 300, 1e-5f);
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= 300;
  for (float v : x) var += (v - mean) * (v - mean);
  const double inv = 1.0 / std::sqrt(var / 300 + 1e-5);
  for (int i = 0; i < 300; ++i) EXPECT_NEAR(y[i], (x[i] - mean) * inv * w[i] + b[i], 1e-5);
  std::vector<float> inplace = x;
  layer_norm(inplace.data(), w.data(), b.data(), inplace.data(), 300, 1e-5f);
  EXPECT_EQ(inplace, y);
}

// As llama.cpp's CPU GELU: the tanh form at the F16-rounded input, rounded to F16, within
// (-10, 10); x beyond 10 and 0 below -10.
TEST(Gelu, IsTheF16RoundedTanhFormWithinTenAndTheLimitsBeyond) {
  const std::vector<float> x = {-12.0f, -10.0f, -3.0f, -0.5f, 0.0f, 1e-3f, 0.5f, 1.0f, 2.5f, 9.99f, 10.0f, 50.0f};
  std::vector<float> y(x.size());
  gelu(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    const float h = tensor::f16_to_f32(tensor::f32_to_f16(v));
    const float expected = v <= -10.0f ? 0.0f : v >= 10.0f ? v : tensor::f16_to_f32(tensor::f32_to_f16(gelu_exact(h)));
    EXPECT_EQ(y[i], expected) << "x = " << v;
    const double exact = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));  // the erf form, for scale
    EXPECT_NEAR(y[i], exact, 2e-3 * std::max(1.0, std::fabs(exact)) + 1e-3) << "x = " << v;
  }
  EXPECT_EQ(gelu_exact(0.0f), 0.0f);
  EXPECT_NEAR(gelu_exact(1.0f), 0.841192f, 1e-6f);  // 0.5 (1 + tanh(√(2/π) · 1.044715))
}

// The vector kernel sums each chain of squares in the reference's order, so its outputs are
// the reference's bits: model dimensions, a head's 64 and 128, lengths that end in a partial
// vector or chain, and magnitudes far enough apart that the double sums round (where their
// order matters).
TEST(RmsNorm, SimdEqualsScalarOnEveryTarget) {
  for (int64_t n : {int64_t{3}, int64_t{64}, int64_t{128}, int64_t{300}, int64_t{896}, int64_t{1001}}) {
    auto x = random_floats(static_cast<size_t>(n), 3);
    const auto w = random_floats(static_cast<size_t>(n), 4);
    for (int64_t i = 0; i < n; i += 5) x[i] *= 1e-9f;
    for (int64_t i = 1; i < n; i += 7) x[i] *= 3e4f;
    std::vector<float> expected(n), y(n);
    rms_norm_reference(x.data(), w.data(), expected.data(), n, 1e-6f);
    for (int64_t target : EverySimdTarget()) {
      rms_norm(x.data(), w.data(), y.data(), n, 1e-6f);
      EXPECT_EQ(y, expected) << hwy::TargetName(target) << ", " << n << " elements";
    }
  }
}

TEST(Rope, BothStylesRotateTheRightPairsByTheRightAngles) {
  const int head_dim = 8, n_rot = 6, n_heads = 2;
  const float base = 10000.0f;
  const float factors[3] = {1.0f, 2.0f, 4.0f};
  for (RopeStyle style : {RopeStyle::Adjacent, RopeStyle::Halves}) {
    const auto x = random_floats(head_dim * n_heads, 3);
    std::vector<float> y = x;
    float c[3], s[3];
    rope_angles(37, n_rot, base, factors, c, s);
    rope_apply(y.data(), n_heads, head_dim, n_rot, style, c, s);
    for (int h = 0; h < n_heads; ++h) {
      const float* in = x.data() + h * head_dim;
      const float* out = y.data() + h * head_dim;
      for (int i = 0; i < n_rot / 2; ++i) {
        const int a = style == RopeStyle::Adjacent ? 2 * i : i;
        const int b = style == RopeStyle::Adjacent ? 2 * i + 1 : i + n_rot / 2;
        const double angle = 37.0 * std::pow(double(base), -2.0 * i / n_rot) / factors[i];
        EXPECT_NEAR(out[a], in[a] * std::cos(angle) - in[b] * std::sin(angle), 1e-4);
        EXPECT_NEAR(out[b], in[a] * std::sin(angle) + in[b] * std::cos(angle), 1e-4);
      }
      for (int i = n_rot; i < head_dim; ++i) EXPECT_EQ(out[i], in[i]);  // beyond n_rot: untouched
    }
  }
}

TEST(Rope, PositionZeroIsIdentity) {
  float c[4], s[4];
  rope_angles(0, 8, 1e6f, nullptr, c, s);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c[i], 1.0f);
    EXPECT_EQ(s[i], 0.0f);
  }
}

// A layer's cache in KvView's layout, built from position-major rows (n_kv rows of every KV
// head's head_dim values, `stride` values a row): positions in blocks of block_size, block i
// of the sequence at pool block order[i], in groups of two blocks; in a group, each KV head's
// tiles in a run of their own, with a gap after every tile, run and group; every element no
// position fills is F16 NaN, so a kernel that lets one into a result fails.
struct PagedKv {
  std::vector<uint16_t> k, v;
  std::vector<int32_t> blocks;
  KvView view;

  PagedKv(const std::vector<float>& kf, const std::vector<float>& vf, int64_t stride, int64_t head_dim, int64_t n_kv,
          int64_t block_size, std::vector<int32_t> order)
      : blocks(std::move(order)) {
    const int64_t block_stride = head_dim * block_size + 3, group_blocks = 2;
    const int64_t head_stride = group_blocks * block_stride + 5;
    const int64_t group_stride = stride / head_dim * head_stride + 7;
    const int64_t groups = (static_cast<int64_t>(blocks.size()) + group_blocks - 1) / group_blocks;
    k.assign(groups * group_stride, 0xFFFF);
    v.assign(groups * group_stride, 0xFFFF);
    view = {k.data(), v.data(), blocks.data(), block_size, block_stride, head_stride, group_blocks, group_stride};
    for (int64_t p = 0; p < n_kv; ++p) {
      const int64_t block = kv_block_offset(view, blocks[p / block_size]), slot = p % block_size;
      for (int64_t d = 0; d < stride; ++d) {
        const int64_t tile = block + d / head_dim * head_stride, i = d % head_dim;
        k[tile + i * block_size + slot] = tensor::f32_to_f16(kf[p * stride + d]);
        v[tile + slot * head_dim + i] = tensor::f32_to_f16(vf[p * stride + d]);
      }
    }
  }
};

std::vector<int32_t> in_order(int64_t n_kv, int64_t block_size) {
  std::vector<int32_t> order((n_kv + block_size - 1) / block_size);
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  return order;
}

TEST(Attention, ReferenceMatchesSoftmaxWeightedValues) {
  const int head_dim = 16, n_kv_heads = 2, n_kv = 23, block_size = 4;
  const int64_t stride = head_dim * n_kv_heads;
  auto kf = random_floats(stride * n_kv, 4), vf = random_floats(stride * n_kv, 5);
  for (auto* x : {&kf, &vf})
    for (auto& f : *x) f = tensor::f16_to_f32(tensor::f32_to_f16(f));  // the cache's F16 values
  const PagedKv kv(kf, vf, stride, head_dim, n_kv, block_size, {3, 0, 5, 1, 4, 2});
  const auto q = random_floats(head_dim, 6);
  std::vector<float> scores(n_kv), out(head_dim);
  const float scale = 0.25f;
  attention_heads_reference(q.data(), 1, 1, kv.view, 1, head_dim, n_kv, scale, scores.data(), out.data());

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
    EXPECT_NEAR(out[i], expected, 1e-5);
  }
}

// Every SIMD target against the reference, for head sizes with and without a vector tail;
// groups of query heads that take two chains per score, one, and more than a pass of the SIMD
// kernel holds (16 heads of one chain where there are 32 registers, 8 else); blocks of the cache's 16 positions (whole vectors), of 8 (narrower than an
// AVX-512 vector: one by one there) and of 5; over a number of positions that leaves the last
// block part-filled.
TEST(Attention, EverySimdTargetMatchesReference) {
  for (int block_size : {16, 8, 5})
    for (int head_dim : {64, 80, 128, 7})
      for (int n_q : {1, 7, 10, 17}) {
        const int n_kv = 301;
        const int64_t stride = 2 * head_dim;
        const PagedKv kv(random_floats(stride * n_kv, 7), random_floats(stride * n_kv, 8), stride, head_dim, n_kv,
                         block_size, in_order(n_kv, block_size));
        const auto q = random_floats(head_dim * n_q, 9);
        std::vector<float> scores(n_kv * n_q), ref(head_dim * n_q), got(head_dim * n_q);
        attention_heads_reference(q.data(), 1, n_q, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), ref.data());
        for (int64_t target : EverySimdTarget()) {
          attention_heads(q.data(), 1, n_q, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
          for (int i = 0; i < head_dim * n_q; ++i)
            ASSERT_NEAR(got[i], ref[i], 1e-5f) << hwy::TargetName(target) << " block " << block_size << " head_dim "
                                               << head_dim << " heads " << n_q << " i " << i;
        }
      }
}

// A sequence's rows at consecutive positions (a verify step's, a prompt chunk's) in one call:
// each row's heads give the same bits as that row alone (its positions only, the later rows'
// not), on every SIMD target, for groups of heads that take two chains per score and one, and
// rows enough to fill several passes; and the reference's result to float rounding.
TEST(Attention, RowsOfASequenceInOnePassGiveEachRowItsOwnBits) {
  for (int block_size : {16, 5})
    for (int head_dim : {64, 7})
      for (int heads_per_row : {1, 4, 7})
        for (int n_rows : {2, 3, 5}) {
          const int n_kv = 37, positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
          const int64_t stride = 2 * head_dim;
          const PagedKv kv(random_floats(stride * positions, 31), random_floats(stride * positions, 32), stride,
                           head_dim, positions, block_size, in_order(positions, block_size));
          const auto q = random_floats(head_dim * n_q, 33);
          std::vector<float> scores(n_q * positions), ref(head_dim * n_q), together(head_dim * n_q),
              alone(head_dim * heads_per_row);
          attention_heads_reference(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f,
                                    scores.data(), ref.data());
          for (int64_t target : EverySimdTarget()) {
            attention_heads(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                            together.data());
            for (int i = 0; i < head_dim * n_q; ++i)
              ASSERT_NEAR(together[i], ref[i], 1e-5f) << hwy::TargetName(target) << " i " << i;
            for (int r = 0; r < n_rows; ++r) {
              const int64_t first = int64_t{r} * heads_per_row * head_dim;
              attention_heads(q.data() + first, 1, heads_per_row, kv.view, 1, head_dim, n_kv + r, 0.125f,
                              scores.data(), alone.data());
              ASSERT_TRUE(std::equal(alone.begin(), alone.end(), together.begin() + first))
                  << hwy::TargetName(target) << " block " << block_size << " head_dim " << head_dim << " heads "
                  << heads_per_row << " rows " << n_rows << " row " << r;
            }
          }
        }
}

// A sliding window (Gemma's local layers): a row sees only its last `window` positions, as if
// the cache held just those; on every SIMD target too, and rows together give each row's own
// bits. Windows of one position, inside the first block, across blocks, and wider than all.
TEST(Attention, SlidingWindowSeesOnlyTheLastPositions) {
  const int head_dim = 64, heads_per_row = 2, n_kv = 30, n_rows = 3, block_size = 16;
  const int positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
  const int64_t stride = 2 * head_dim;
  const auto kf = random_floats(stride * positions, 41), vf = random_floats(stride * positions, 42);
  const PagedKv kv(kf, vf, stride, head_dim, positions, block_size, in_order(positions, block_size));
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
      const PagedKv cut(kw, vw, stride, head_dim, sees - start, block_size, in_order(sees - start, block_size));
      attention_heads_reference(q.data() + r * heads_per_row * head_dim, 1, heads_per_row, cut.view, 1, head_dim,
                                sees - start, 0.125f, scores.data(), row.data());
      for (int i = 0; i < head_dim * heads_per_row; ++i)
        ASSERT_NEAR(ref[r * heads_per_row * head_dim + i], row[i], 1e-6f) << "window " << window << " row " << r;
    }
    for (int64_t target : EverySimdTarget()) {
      attention_heads(q.data(), n_rows, heads_per_row, kv.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data(),
                      window);
      for (int i = 0; i < head_dim * n_q; ++i)
        ASSERT_NEAR(got[i], ref[i], 1e-5f) << hwy::TargetName(target) << " window " << window << " i " << i;
      for (int r = 0; r < n_rows; ++r) {
        attention_heads(q.data() + r * heads_per_row * head_dim, 1, heads_per_row, kv.view, 1, head_dim, n_kv + r,
                        0.125f, scores.data(), row.data(), window);
        ASSERT_TRUE(std::equal(row.begin(), row.end(), got.begin() + r * heads_per_row * head_dim))
            << hwy::TargetName(target) << " window " << window << " row " << r;
      }
    }
  }
}

// A windowed cache (model::KvWindow) has let go of the blocks wholly before the first row's
// window, and others' keys and values may lie there: the kernels read none of them. Those
// blocks hold NaN here, which any read would carry into the output; the result's bits equal
// those over a cache with every position in place, for the reference and every SIMD target.
TEST(Attention, SlidingWindowReadsNoBlockBeforeIt) {
  const int head_dim = 64, heads_per_row = 2, n_kv = 70, n_rows = 3, block_size = 16;
  const int positions = n_kv + n_rows - 1, n_q = n_rows * heads_per_row;
  const int64_t stride = 2 * head_dim, window = 20;
  const int64_t gone = window_start(n_kv, window) / block_size * block_size;  // 48: blocks 0-2
  const auto kf = random_floats(stride * positions, 51), vf = random_floats(stride * positions, 52);
  auto k_gone = kf, v_gone = vf;
  std::fill(k_gone.begin(), k_gone.begin() + gone * stride, NAN);
  std::fill(v_gone.begin(), v_gone.begin() + gone * stride, NAN);
  const PagedKv whole(kf, vf, stride, head_dim, positions, block_size, in_order(positions, block_size));
  const PagedKv windowed(k_gone, v_gone, stride, head_dim, positions, block_size, in_order(positions, block_size));
  const auto q = random_floats(head_dim * n_q, 53);
  std::vector<float> scores(n_q * positions), want(head_dim * n_q), got(head_dim * n_q);
  attention_heads_reference(q.data(), n_rows, heads_per_row, whole.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                            want.data(), window);
  attention_heads_reference(q.data(), n_rows, heads_per_row, windowed.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                            got.data(), window);
  ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "reference";
  for (int64_t target : EverySimdTarget()) {
    attention_heads(q.data(), n_rows, heads_per_row, whole.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                    want.data(), window);
    attention_heads(q.data(), n_rows, heads_per_row, windowed.view, 1, head_dim, n_kv, 0.125f, scores.data(),
                    got.data(), window);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << hwy::TargetName(target);
  }
}

// Where the blocks lie in the pool does not change a result by a bit: the same positions in
// shuffled blocks (the last part-filled) and in blocks in order, for the reference and every
// SIMD target.
TEST(Attention, BlockOrderDoesNotChangeTheResult) {
  const int head_dim = 64, n_kv = 45, block_size = 16;
  const int64_t stride = 2 * head_dim;
  const auto kf = random_floats(stride * n_kv, 11), vf = random_floats(stride * n_kv, 12);
  const PagedKv ordered(kf, vf, stride, head_dim, n_kv, block_size, in_order(n_kv, block_size));
  const PagedKv shuffled(kf, vf, stride, head_dim, n_kv, block_size, {2, 0, 1});
  const auto q = random_floats(head_dim * 3, 13);
  std::vector<float> scores(n_kv * 3), want(head_dim * 3), got(head_dim * 3);
  attention_heads_reference(q.data(), 1, 3, ordered.view, 1, head_dim, n_kv, 0.125f, scores.data(), want.data());
  attention_heads_reference(q.data(), 1, 3, shuffled.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
  EXPECT_EQ(got, want);
  for (int64_t target : EverySimdTarget()) {
    attention_heads(q.data(), 1, 3, ordered.view, 1, head_dim, n_kv, 0.125f, scores.data(), want.data());
    attention_heads(q.data(), 1, 3, shuffled.view, 1, head_dim, n_kv, 0.125f, scores.data(), got.data());
    EXPECT_EQ(got, want) << hwy::TargetName(target);
  }
}

// SiLU × up on every SIMD target equals the scalar std::exp version to a few ulp, over the
// whole float range a gate takes (also far past where exp overflows).
TEST(Ops, SiluMulEverySimdTargetMatchesReference) {
  std::vector<float> g = random_floats(1000, 21), u = random_floats(1000, 22);
  for (size_t i = 0; i < g.size(); ++i) g[i] *= (i % 3 == 0) ? 60.0f : 4.0f;
  g[3] = -1e30f, g[4] = 1e30f, g[5] = -200.0f, g[6] = 200.0f, g[7] = 0.0f;
  std::vector<float> ref(g.size()), got(g.size());
  silu_mul_reference(g.data(), u.data(), ref.data(), static_cast<int64_t>(g.size()));
  for (int64_t target : EverySimdTarget()) {
    silu_mul(g.data(), u.data(), got.data(), static_cast<int64_t>(g.size()));
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-6f * std::fabs(ref[i]) + 1e-30f) << hwy::TargetName(target) << " g " << g[i];
  }
}

TEST(Ops, SiluMulAddSoftmax) {
  std::vector<float> g = {-2.0f, 0.0f, 3.0f}, u = {1.0f, 5.0f, -2.0f}, out(3);
  silu_mul(g.data(), u.data(), out.data(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(out[i], g[i] / (1 + std::exp(-g[i])) * u[i], 1e-6);
  add(out.data(), u.data(), 3);
  EXPECT_NEAR(out[1], 5.0f, 1e-6);
  std::vector<float> x = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(softmax(x.data(), 3), 3.0f);
  double e = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[i], std::exp(i + 1.0) / e, 1e-6);
}

}  // namespace
}  // namespace nanoserve::kernels
