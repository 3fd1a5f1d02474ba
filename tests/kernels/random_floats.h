// Normally distributed floats from a seed, for the kernels' tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace nanoserve::kernels {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace nanoserve::kernels
