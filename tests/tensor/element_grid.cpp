#include "tensor/element_grid.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <sstream>
#include <string>

#include "tensor/fp16.h"

namespace nanoserve::test {
namespace {

using gguf::TensorType;

double half_at(const uint8_t* p) {  // little-endian fp16 at p
  return tensor::f16_to_f32(static_cast<uint16_t>(p[0] | p[1] << 8));
}

// Levels q in [qmin, qmax] decoding to scale * q + offset.
ElementGrid affine(double scale, int qmin, int qmax, double offset, double level_slack = 0) {
  const double a = scale * qmin + offset;
  const double b = scale * qmax + offset;
  return {std::min(a, b), std::max(a, b), std::fabs(scale), level_slack};
}

// Q4_K / Q5_K: 6-bit scale and min of sub-block j from the 12 scale bytes. Sub-blocks 0-3:
// bits 0-5 of bytes j and j+4. Sub-blocks 4-7: low 4 bits in the two nibbles of byte j+4,
// high 2 bits in bits 6-7 of bytes j-4 (scale) and j (min).
void k4_scale_min(const uint8_t* s, int j, int& scale, int& min) {
  if (j < 4) {
    scale = s[j] % 64;
    min = s[j + 4] % 64;
  } else {
    scale = s[j + 4] % 16 + (s[j - 4] / 64) * 16;
    min = s[j + 4] / 16 + (s[j] / 64) * 16;
  }
}

// Q3_K: 6-bit scale of sub-block j (stored +32): low 4 bits are nibble j/8 of byte j%8,
// high 2 bits are bit pair j/4 of byte 8 + j%4.
int q3k_scale(const uint8_t* s, int j) {
  const int low = (s[j % 8] >> (4 * (j / 8))) % 16;
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) % 4;
  return low + 16 * high - 32;
}

}  // namespace

double fp16_rounding(double v) { return std::max(std::fabs(v) * 0x1p-11, 0x1p-25); }

ElementGrid element_grid(TensorType type, const uint8_t* b, int e) {
  switch (type) {
    case TensorType::Q4_0: {
      const double d = half_at(b);
      return affine(d, -8, 7, 0, 8 * fp16_rounding(d));
    }
    case TensorType::Q4_1: {
      const double d = half_at(b), m = half_at(b + 2);
      return affine(d, 0, 15, m, 15 * fp16_rounding(d) + fp16_rounding(m));
    }
    case TensorType::Q5_0: {
      const double d = half_at(b);
      return affine(d, -16, 15, 0, 16 * fp16_rounding(d));
    }
    case TensorType::Q5_1: {
      const double d = half_at(b), m = half_at(b + 2);
      return affine(d, 0, 31, m, 31 * fp16_rounding(d) + fp16_rounding(m));
    }
    case TensorType::Q8_0: {
      const double d = half_at(b);
      return affine(d, -128, 127, 0, 127 * fp16_rounding(d));
    }
    case TensorType::Q2_K: {  // scales[16] qs[64] d dmin
      const double d = half_at(b + 80), dmin = half_at(b + 82);
      const uint8_t sm = b[e / 16];
      return affine(d * (sm % 16), 0, 3, -dmin * (sm / 16));
    }
    case TensorType::Q3_K: {  // hmask[32] qs[64] scales[12] d
      const double d = half_at(b + 108);
      return affine(d * q3k_scale(b + 96, e / 16), -4, 3, 0);
    }
    case TensorType::Q4_K:    // d dmin scales[12] qs[128]
    case TensorType::Q5_K: {  // d dmin scales[12] qh[32] qs[128]
      const double d = half_at(b), dmin = half_at(b + 2);
      int sc = 0, m = 0;
      k4_scale_min(b + 4, e / 32, sc, m);
      return affine(d * sc, 0, type == TensorType::Q4_K ? 15 : 31, -dmin * m);
    }
    case TensorType::Q6_K: {  // ql[128] qh[64] scales[16] (int8) d
      const double d = half_at(b + 208);
      return affine(d * static_cast<int8_t>(b[192 + e / 16]), -32, 31, 0);
    }
    case TensorType::Q8_K: {  // float d, qs[256], bsums[16]; d is 1/iscale rounded to float
      float d;
      std::memcpy(&d, b, sizeof d);
      return affine(d, -128, 127, 0, 127 * std::fabs(d) * 0x1p-23);
    }
    default:
      throw std::invalid_argument("element_grid: not a quantized type: " + std::string(gguf::type_name(type)));
  }
}

double allowed_error(const ElementGrid& g, double x) {
  const double dist = x < g.lo ? g.lo - x : (x > g.hi ? x - g.hi : 0.0);
  const double rounding = 1e-6 * (std::fabs(g.lo) + std::fabs(g.hi) + std::fabs(x));
  return dist + g.step / 2 + g.level_slack + rounding;
}

double float_type_error(TensorType type, double x) {
  switch (type) {
    case TensorType::F32:
      return 0;
    case TensorType::F16:
      return fp16_rounding(x);
    case TensorType::BF16:
      return std::max(std::fabs(x) * 0x1p-8, 0x1p-134);
    default:
      throw std::invalid_argument("float_type_error: not a float type: " + std::string(gguf::type_name(type)));
  }
}

double max_rel_rms(TensorType type) {
  switch (type) {
    case TensorType::F32: return 0;
    case TensorType::F16: return 3e-4;
    case TensorType::BF16: return 3e-3;
    case TensorType::Q8_0: return 0.008;
    case TensorType::Q8_K: return 0.01;
    case TensorType::Q6_K: return 0.025;
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q5_K: return 0.055;
    case TensorType::Q4_0:
    case TensorType::Q4_1: return 0.11;
    case TensorType::Q4_K: return 0.1;
    case TensorType::Q3_K: return 0.2;
    case TensorType::Q2_K: return 0.4;
    default:
      throw std::invalid_argument("max_rel_rms: unsupported type " + std::string(gguf::type_name(type)));
  }
}

double RowReport::rel_rms() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err); }

void check_row(TensorType type, const float* reference, const uint8_t* bytes, const float* decoded, int64_t n,
               bool ref_is_fp16, RowReport& report) {
  const gguf::TypeInfo& info = gguf::type_info(type);
  const bool quantized = info.block_elems > 1;
  for (int64_t i = 0; i < n; ++i) {
    const double x = reference[i];
    const double y = decoded[i];
    double allowed = quantized ? allowed_error(element_grid(type, bytes + i / info.block_elems * info.block_bytes,
                                                            static_cast<int>(i % info.block_elems)),
                                               x)
                               : float_type_error(type, x);
    if (ref_is_fp16) allowed += 2 * fp16_rounding(x);
    const double err = std::fabs(y - x);
    ++report.checked;
    report.sum_sq_err += err * err;
    report.sum_sq_ref += x * x;
    if (err > 0) report.worst = std::max(report.worst, allowed > 0 ? err / allowed : INFINITY);
    if (!(err <= allowed)) {
      if (report.violations++ == 0) {
        std::ostringstream msg;
        msg.precision(9);
        msg << "element " << i << ": reference " << x << ", decoded " << y << ", |error| " << err << " > allowed "
            << allowed;
        report.first_violation = msg.str();
      }
    }
  }
}

}  // namespace nanoserve::test
