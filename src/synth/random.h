// Seeded normal random numbers for synthesized weights: fast, and the same on every
// machine and standard library (std::normal_distribution is not).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace nanoserve::synth {

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed for one tensor: the user's seed mixed with the tensor's name (FNV-1a).
inline uint64_t mix_seed(uint64_t seed, std::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001B3ull;
  uint64_t x = seed ^ h;
  return splitmix64(x);
}

// xoshiro256+ with Box-Muller; one stream per (tensor seed, row).
class NormalRng {
 public:
  NormalRng(uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (auto& s : s_) s = splitmix64(x);
  }
  float next() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    // u1 in (0, 1], u2 in [0, 1): 53-bit uniforms.
    double u1 = (static_cast<double>(bits() >> 11) + 1.0) * 0x1.0p-53;
    double u2 = static_cast<double>(bits() >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = static_cast<float>(r * std::sin(2 * M_PI * u2));
    have_spare_ = true;
    return static_cast<float>(r * std::cos(2 * M_PI * u2));
  }

 private:
  uint64_t bits() {
    const uint64_t result = s_[0] + s_[3];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = (s_[3] << 45) | (s_[3] >> 19);
    return result;
  }
  uint64_t s_[4];
  float spare_ = 0;
  bool have_spare_ = false;
};

}  // namespace nanoserve::synth
