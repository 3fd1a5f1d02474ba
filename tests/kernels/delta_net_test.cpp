// The delta-net step: the reference equals the recurrence written out in doubles (decay, the
// delta rule's update, the read), and every SIMD target equals the reference within float
// rounding (it fuses multiply-adds), over many steps of one state.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/delta_net.h"
#include "kernels/every_target.h"
#include "kernels/random_floats.h"

namespace nanoserve::kernels {
namespace {

std::vector<float> unit(std::vector<float> x) {
  double sum = 0;
  for (float v : x) sum += double(v) * v;
  for (float& v : x) v = static_cast<float>(v / std::sqrt(sum));
  return x;
}

TEST(DeltaNet, ReferenceIsTheRecurrence) {
  const int64_t d = 8;
  std::vector<float> s = random_floats(d * d, 1, 0.3f), out(d);
  const auto q = unit(random_floats(d, 2)), k = unit(random_floats(d, 3)), v = random_floats(d, 4);
  const float beta = 0.7f, decay = 0.9f, scale = 0.35f;
  std::vector<double> want_s(d * d), kv(d, 0.0), want_out(d, 0.0);
  for (int64_t i = 0; i < d * d; ++i) want_s[i] = double(s[i]) * decay;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) kv[j] += want_s[i * d + j] * k[i];
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) want_s[i * d + j] += double(k[i]) * beta * (v[j] - kv[j]);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) want_out[j] += want_s[i * d + j] * q[i] * scale;
  delta_net_step_reference(s.data(), q.data(), k.data(), v.data(), beta, decay, scale, out.data(), d);
  for (int64_t i = 0; i < d * d; ++i) EXPECT_NEAR(s[i], want_s[i], 1e-6);
  for (int64_t j = 0; j < d; ++j) EXPECT_NEAR(out[j], want_out[j], 1e-6);
}

TEST(DeltaNet, EveryTargetAgreesWithTheReferenceOverManySteps) {
  for (const int64_t d : {int64_t{16}, int64_t{32}, int64_t{128}, int64_t{20}}) {  // 20: no whole vectors
    for (int64_t target : EverySimdTarget()) {
      std::vector<float> s_ref(d * d, 0.0f), s(d * d, 0.0f), out_ref(d), out(d);
      float worst = 0.0f;
      for (uint32_t t = 0; t < 40; ++t) {
        const auto q = unit(random_floats(d, 10 + t)), k = unit(random_floats(d, 100 + t));
        const auto v = random_floats(d, 1000 + t);
        const float beta = 0.3f + 0.01f * t, decay = 0.8f + 0.004f * t, scale = 1.0f / std::sqrt(float(d));
        delta_net_step_reference(s_ref.data(), q.data(), k.data(), v.data(), beta, decay, scale, out_ref.data(), d);
        delta_net_step(s.data(), q.data(), k.data(), v.data(), beta, decay, scale, out.data(), d);
        for (int64_t j = 0; j < d; ++j) worst = std::max(worst, std::abs(out[j] - out_ref[j]));
      }
      EXPECT_LT(worst, 1e-5f) << hwy::TargetName(target) << ", d " << d;
      for (int64_t i = 0; i < d * d; ++i) ASSERT_NEAR(s[i], s_ref[i], 1e-5f) << hwy::TargetName(target);
    }
  }
}

}  // namespace
}  // namespace nanoserve::kernels
