// RMSNorm, RoPE and the element-wise kernels against plain double-precision math.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/every_target.h"
#include "kernels/gelu.h"
#include "kernels/norm.h"
#include "kernels/ops.h"
#include "kernels/random_floats.h"
#include "kernels/rope.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

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

// YaRN at gpt-oss-20b's settings (factor 32 over an original context of 4096, base 150000, 64
// rotary dimensions, beta 32 and 1): the ramp's ends are the pairs that turn 32 and 1 times over
// 4096 positions, floored and ceiled (8.09 -> 8, 17.39 -> 18); pairs below 8 keep their angle,
// pairs from 18 on turn 32 times slower, those between blend linearly; cos and sin grow by
// 1 + 0.1 ln 32.
TEST(Rope, YarnBlendsScaledAndUnscaledAnglesAtGptOssSettings) {
  const int n_rot = 64;
  const double base = 150000.0, factor = 32.0;
  const Yarn yarn = yarn_for(n_rot, static_cast<float>(base), static_cast<float>(factor), 4096, 32.0f, 1.0f);
  EXPECT_EQ(yarn.low, 8.0f);
  EXPECT_EQ(yarn.high, 18.0f);
  EXPECT_NEAR(yarn.mscale, 1.0 + 0.1 * std::log(32.0), 1e-6);
  float c[32], s[32];
  const int64_t pos = 1000;
  rope_angles_yarn(pos, n_rot, static_cast<float>(base), yarn, c, s);
  for (int i = 0; i < n_rot / 2; ++i) {
    const double theta = pos * std::pow(base, -2.0 * i / n_rot);
    const double keep = 1.0 - std::clamp((i - 8.0) / 10.0, 0.0, 1.0);  // 1 below 8, 0 from 18
    const double angle = theta / factor * (1.0 - keep) + theta * keep;
    const double m = 1.0 + 0.1 * std::log(factor);
    EXPECT_NEAR(c[i], std::cos(angle) * m, 2e-4) << i;
    EXPECT_NEAR(s[i], std::sin(angle) * m, 2e-4) << i;
  }
}

// gpt-oss's clamped SwiGLU: the gate clamped above only, up clamped both ways, then
// gate * sigmoid(1.702 gate) * (up + 1).
TEST(Ops, SwigluClampedClampsGateAboveAndUpBothWays) {
  const std::vector<float> gate = {-9.0f, -1.0f, 0.0f, 0.5f, 6.9f, 7.5f, 100.0f};
  const std::vector<float> up = {-9.0f, -0.5f, 3.0f, 8.0f, -7.5f, 1.0f, 2.0f};
  std::vector<float> out(gate.size());
  swiglu_clamped(gate.data(), up.data(), out.data(), static_cast<int64_t>(gate.size()), 1.702f, 7.0f);
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = std::min(double(gate[i]), 7.0), u = std::clamp(double(up[i]), -7.0, 7.0);
    EXPECT_NEAR(out[i], g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0), 1e-5) << i;
  }
  EXPECT_NEAR(out[6], 7.0 / (1.0 + std::exp(-1.702 * 7.0)) * 3.0, 1e-5);  // gate 100 acts as 7
}

TEST(Rope, PositionZeroIsIdentity) {
  float c[4], s[4];
  rope_angles(0, 8, 1e6f, nullptr, c, s);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c[i], 1.0f);
    EXPECT_EQ(s[i], 0.0f);
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

// The clamped SwiGLU on every SIMD target equals the scalar reference to a few ulp, over gates
// and ups far past the clamp both ways (and a length with a scalar tail).
TEST(Ops, SwigluClampedEverySimdTargetMatchesReference) {
  std::vector<float> g = random_floats(1001, 23), u = random_floats(1001, 24);
  for (size_t i = 0; i < g.size(); ++i) g[i] *= (i % 3 == 0) ? 60.0f : 8.0f, u[i] *= 10.0f;
  g[3] = -1e30f, g[4] = 1e30f, g[5] = -200.0f, g[6] = 200.0f, g[7] = 0.0f;
  std::vector<float> ref(g.size()), got(g.size());
  swiglu_clamped_reference(g.data(), u.data(), ref.data(), static_cast<int64_t>(g.size()), 1.702f, 7.0f);
  for (int64_t target : EverySimdTarget()) {
    swiglu_clamped(g.data(), u.data(), got.data(), static_cast<int64_t>(g.size()), 1.702f, 7.0f);
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
