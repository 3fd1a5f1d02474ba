// Scale searches for the K-quants. Sums are accumulated in float, in element order, and each
// product is evaluated left to right (w * x * l is (w * x) * l): this is what makes the chosen
// scales, and so the bytes, equal to ggml's. Do not "simplify" the arithmetic.
#include "tensor/k_quant_search.h"

#include <algorithm>
#include <cmath>

namespace nanoserve::tensor {
namespace {

// Below this the group is treated as all zeros (ggml's GROUP_MAX_EPS).
constexpr float kGroupMaxEps = 1e-15f;
constexpr int kMaxGroup = 32;

// The element of largest magnitude, with its sign (the first one on ties); 0 when the
// group is (numerically) all zero.
float signed_absmax(int n, const float* x) {
  float max = 0.0f;
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  return amax < kGroupMaxEps ? 0.0f : max;
}

int clamp_symmetric(int l, int nmax) { return std::max(-nmax, std::min(nmax - 1, l)); }

struct Sums {
  float lx = 0.0f;  // sum of w * x * l
  float l2 = 0.0f;  // sum of w * l * l
};

// Levels for one trial inverse scale, with x^2 weights; writes l + nmax to L when given.
Sums symmetric_sums(int n, int nmax, const float* x, float iscale, int8_t* L) {
  Sums s;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_symmetric(nearest_int(iscale * x[i]), nmax);
    if (L) L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    s.lx += w * x[i] * static_cast<float>(l);
    s.l2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  return s;
}

}  // namespace

float fit_symmetric_scale(int n, int nmax, const float* x, int8_t* L) {
  const float max = signed_absmax(n, x);
  if (max == 0.0f) {
    std::fill(L, L + n, int8_t{0});
    return 0.0f;
  }
  Sums s = symmetric_sums(n, nmax, x, static_cast<float>(-nmax) / max, L);
  float scale = s.l2 != 0.0f ? s.lx / s.l2 : 0.0f;
  // The squared error is sum(w x^2) - lx^2 / l2, so a larger lx^2 / l2 is a better fit.
  float best = scale * s.lx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    s = symmetric_sums(n, nmax, x, iscale, nullptr);
    if (s.l2 > 0.0f && s.lx * s.lx > best * s.l2) {
      symmetric_sums(n, nmax, x, iscale, L);
      scale = s.lx / s.l2;
      best = scale * s.lx;
    }
  }
  return scale;
}

float fit_symmetric_scale_refined(int n, int nmax, const float* x, int8_t* L) {
  const float max = signed_absmax(n, x);
  if (max == 0.0f) {
    std::fill(L, L + n, int8_t{0});
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f;
  float suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_symmetric(nearest_int(iscale * x[i]), nmax);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;  // the sums without element i
      if (!(slx > 0.0f)) continue;
      float sl2 = suml2 - w * li * li;
      // Best level for element i given the others' scale: x / (slx / sl2).
      const int new_l = clamp_symmetric(nearest_int(x[i] * sl2 / slx), nmax);
      if (new_l == L[i]) continue;
      slx += w * x[i] * static_cast<float>(new_l);
      sl2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
      // Accept when lx^2 / l2 grows (cross-multiplied, both l2 positive).
      if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(new_l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

ScaleMin fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, ScaleScan scan, bool use_mad) {
  float min = x[0];
  float max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  min = std::min(min, 0.0f);  // the offset only ever shifts down: x ~ scale * l + min
  if (max == min) {
    std::fill(L, L + n, uint8_t{0});
    return {0.0f, -min};
  }

  auto error_of = [&](float scale, float offset, const uint8_t* levels) {
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * static_cast<float>(levels[i]) + offset - x[i];
      err += w[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return err;
  };
  auto level = [&](float iscale, int i) { return std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min)))); };

  // Start from the plain min/max grid.
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(level(iscale, i));
  float best_error = error_of(scale, min, L);

  uint8_t trial[kMaxGroup];
  for (int k = 0; k <= scan.nstep; ++k) {
    iscale = (scan.rmin + scan.rdelta * static_cast<float>(k) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0.0f;
    float sum_l2 = 0.0f;
    float sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      trial[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    // Weighted least squares for x ~ s * l + m over these levels (Cramer's rule).
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0.0f)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0.0f) {  // a positive offset is not representable: refit the scale alone
      this_min = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    const float err = error_of(this_scale, this_min, trial);
    if (err < best_error) {
      std::copy(trial, trial + n, L);
      best_error = err;
      scale = this_scale;
      min = this_min;
    }
  }
  return {scale, -min};
}

}  // namespace nanoserve::tensor
