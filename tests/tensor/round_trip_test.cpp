// quantize_row -> dequantize_row on seeded random data, for every type.
//
// Per element, every type must meet the bound of element_grid.h: rounding to the nearest
// level of the block's own grid (half a step), clipping only outside the grid, plus the fp16
// rounding of the legacy scales. Per type:
//   F32   exact.                       F16   |err| <= 2^-11 |x| (>= 2^-25): half an ulp.
//   BF16  |err| <= 2^-8 |x|.
//   Q8_0  |err| <= d/2 + 127 * fp16err(d),          d = absmax / 127.
//   Q4_0  |err| <= d   +   8 * fp16err(d),          d = absmax / 8: the value of largest
//         magnitude maps to level -8, so the opposite extreme (+8) is clipped to +7: one step.
//   Q5_0  |err| <= d   +  16 * fp16err(d),          d = absmax / 16, same reason.
//   Q4_1  |err| <= d/2 + 15 * fp16err(d) + fp16err(min),  d = (max - min) / 15.
//   Q5_1  |err| <= d/2 + 31 * fp16err(d) + fp16err(min),  d = (max - min) / 31.
//   Q2_K..Q6_K  |err| <= step/2 of the sub-block's decoded scale (the quantizer requantizes
//         against it), or the distance to the sub-block's grid for values it clipped.
//   Q8_K  |err| <= d/2 (+ float rounding of d = absmax / 127).
// Because clipping is allowed per element, each type also has a bound on the relative RMS
// error for Gaussian and uniform data: see max_rel_rms() in element_grid.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "tensor/element_grid.h"
#include "tensor/quant.h"

namespace nanoserve::tensor {
namespace {

using T = gguf::TensorType;
using test::RowReport;

constexpr int64_t kRow = 8192;  // 32 super-blocks of 256

const T kTypes[] = {T::F32,  T::F16,  T::BF16, T::Q8_0, T::Q4_0, T::Q4_1, T::Q5_0,
                    T::Q5_1, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::Q8_K};

using Generator = std::function<std::vector<float>(std::mt19937_64&)>;

std::vector<float> normal(std::mt19937_64& rng, double sigma) {
  std::normal_distribution<double> dist(0.0, sigma);
  std::vector<float> x(kRow);
  for (float& v : x) v = static_cast<float>(dist(rng));
  return x;
}

struct Distribution {
  std::string name;
  Generator make;
  bool check_rms;  // quality bound applies (not for degenerate or scale-limited data)
};

std::vector<Distribution> distributions() {
  return {
      {"normal", [](std::mt19937_64& rng) { return normal(rng, 1.0); }, true},
      {"uniform",
       [](std::mt19937_64& rng) {
         std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
         std::vector<float> x(kRow);
         for (float& v : x) v = dist(rng);
         return x;
       },
       true},
      {"positive_offset",  // all values in [1, 2]: exercises the min / offset paths
       [](std::mt19937_64& rng) {
         std::uniform_real_distribution<float> dist(1.0f, 2.0f);
         std::vector<float> x(kRow);
         for (float& v : x) v = dist(rng);
         return x;
       },
       false},
      {"outliers",  // 1% of the values 30x larger
       [](std::mt19937_64& rng) {
         auto x = normal(rng, 1.0);
         std::uniform_int_distribution<int> pick(0, 99);
         for (float& v : x)
           if (pick(rng) == 0) v *= 30.0f;
         return x;
       },
       false},
      {"zero_blocks",  // every other 32-block and every third 256-block all zero
       [](std::mt19937_64& rng) {
         auto x = normal(rng, 1.0);
         for (int64_t i = 0; i < kRow; ++i)
           if ((i / 32) % 2 == 0 || (i / 256) % 3 == 0) x[i] = 0.0f;
         return x;
       },
       false},
      {"constant_blocks",  // each 32-block one constant, sign and magnitude varying
       [](std::mt19937_64& rng) {
         std::normal_distribution<float> dist(0.0f, 3.0f);
         std::vector<float> x(kRow);
         for (int64_t i = 0; i < kRow; i += 32) std::fill(x.begin() + i, x.begin() + i + 32, dist(rng));
         return x;
       },
       false},
      // fp16 scales go subnormal or zero: the per-element bound still holds, quality does not.
      {"tiny", [](std::mt19937_64& rng) { return normal(rng, 1e-6); }, false},
      {"huge", [](std::mt19937_64& rng) { return normal(rng, 1e3); }, false},   // scales stay below 65504
  };
}

class RoundTrip : public ::testing::TestWithParam<T> {};

TEST_P(RoundTrip, WithinPerElementAndRmsBounds) {
  const T type = GetParam();
  const size_t bytes = *gguf::row_bytes(type, kRow);
  std::mt19937_64 rng(0x5eed0000u + static_cast<uint32_t>(type));
  for (const Distribution& d : distributions()) {
    SCOPED_TRACE(d.name);
    const std::vector<float> x = d.make(rng);
    std::vector<uint8_t> q(bytes);
    std::vector<float> y(kRow);
    quantize_row(type, x.data(), q.data(), kRow);
    dequantize_row(type, q.data(), y.data(), kRow);

    RowReport report;
    test::check_row(type, x.data(), q.data(), y.data(), kRow, false, report);
    EXPECT_EQ(report.violations, 0) << report.first_violation;
    if (d.check_rms) {
      EXPECT_LE(report.rel_rms(), test::max_rel_rms(type));
    }
    if (d.name == "zero_blocks") {  // a zero 32-block is a whole block or whole sub-blocks
      for (int64_t i = 0; i < kRow; ++i) {
        if ((i / 32) % 2 == 0 || (i / 256) % 3 == 0) {
          ASSERT_EQ(y[i], 0.0f) << "element " << i << " of a zero block";
        }
      }
    }

    // Deterministic: the same input gives the same bytes.
    std::vector<uint8_t> again(bytes);
    quantize_row(type, x.data(), again.data(), kRow);
    EXPECT_EQ(q, again);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RoundTrip, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<T>& info) { return std::string(gguf::type_name(info.param)); });

}  // namespace
}  // namespace nanoserve::tensor
