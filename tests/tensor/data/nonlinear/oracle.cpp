// Oracle for nanoserve's IQ4_NL / IQ4_XS / MXFP4 goldens: writes seeded inputs and the bytes
// ggml_quantize_chunk (llama-quantize's call) makes of them, with and without an imatrix.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ggml.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64() {  // splitmix64
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform() { return (next_u64() >> 11) * (1.0 / 9007199254740992.0); }
static double normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

static void write(const std::string& path, const void* p, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(p, 1, n, f) != n) { std::perror(path.c_str()); std::exit(1); }
  std::fclose(f);
}

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  constexpr int kRows = 8, kCols = 512;
  std::vector<float> x(kRows * kCols), w(kCols);
  for (int r = 0; r < kRows; ++r) {
    float* row = x.data() + r * kCols;
    for (int j = 0; j < kCols; ++j) {
      float v = 0;
      switch (r) {
        case 0: v = normal(); break;                                  // gaussian
        case 1: v = 2 * uniform() - 1; break;                         // uniform [-1, 1)
        case 2: v = 1 + uniform(); break;                             // all positive [1, 2)
        case 3: v = normal() * (uniform() < 0.02 ? 30 : 1); break;   // 2% outliers
        case 4: v = j / 32 == 3 ? 0.0f : normal() * (j / 32 == 5 ? 1e-17 : 1e-3); break;  // a zero block, a tiny one
        case 5: v = normal() * std::pow(10.0, (j / 32) % 8 - 4); break; // sub-block scales 1e-4 .. 1e3
        case 6: v = normal() * 3e4 - (j % 7 == 0 ? 5e4 : 0); break; // large, skewed negative
        default: v = (j % 32 == 0 ? -1.0 : 0.25) * (1 + j / 32); break; // one negative extreme per block
      }
      row[j] = static_cast<float>(v);
    }
  }
  for (int j = 0; j < kCols; ++j) w[j] = static_cast<float>(0.05 + 10 * uniform() * uniform());
  write(dir + "/input.f32", x.data(), x.size() * sizeof(float));
  write(dir + "/imatrix.f32", w.data(), w.size() * sizeof(float));

  ggml_quantize_init(GGML_TYPE_IQ4_NL);
  ggml_quantize_init(GGML_TYPE_IQ4_XS);
  ggml_quantize_init(GGML_TYPE_MXFP4);
  struct Case { ggml_type type; const char* name; };
  for (Case c : {Case{GGML_TYPE_IQ4_NL, "iq4_nl"}, Case{GGML_TYPE_IQ4_XS, "iq4_xs"}, Case{GGML_TYPE_MXFP4, "mxfp4"}}) {
    const size_t bytes = ggml_row_size(c.type, kCols) * kRows;
    for (int with_imatrix = 0; with_imatrix < 2; ++with_imatrix) {
      std::vector<uint8_t> out(bytes);
      const size_t n = ggml_quantize_chunk(c.type, x.data(), out.data(), 0, kRows, kCols, with_imatrix ? w.data() : nullptr);
      if (n != bytes || !ggml_validate_row_data(c.type, out.data(), n)) { std::fprintf(stderr, "bad %s\n", c.name); return 1; }
      write(dir + "/" + c.name + (with_imatrix ? "-imatrix" : "") + ".bin", out.data(), out.size());
    }
  }
  std::printf("wrote %d rows of %d\n", kRows, kCols);
  return 0;
}
