// F32, F16 and BF16 rows. The 16-bit values are read and written with memcpy because a
// row inside a mapped file need not be 2-byte aligned.
#include <cstring>

#include "tensor/codecs.h"
#include "tensor/fp16.h"

namespace nanoserve::tensor {
namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }

}  // namespace

void dequantize_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_f32(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_f16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(load_u16(p + 2 * i));
}

void quantize_f16(const float* src, void* dst, int64_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) store_u16(p + 2 * i, f32_to_f16(src[i]));
}

void dequantize_bf16(const void* src, float* dst, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(p + 2 * i));
}

void quantize_bf16(const float* src, void* dst, int64_t n) {
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) store_u16(p + 2 * i, f32_to_bf16(src[i]));
}

}  // namespace nanoserve::tensor
