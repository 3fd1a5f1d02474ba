#include "kernels/activations.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/scratch.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace nanoserve::kernels {

ActType act_type_for(TensorType weight_type) {
  switch (weight_type) {
    case TensorType::F32: return ActType::F32;
    case TensorType::F16: return ActType::F16;
    case TensorType::BF16: return ActType::BF16;
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q8_0:
    case TensorType::IQ4_NL:
    case TensorType::MXFP4: return ActType::Q8_0;
    case TensorType::Q4_1:
    case TensorType::Q5_1: return ActType::Q8_1;
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
    case TensorType::IQ4_XS: return ActType::Q8_K;
    default:
      throw std::invalid_argument("no matmul for weight type " + std::string(gguf::type_name(weight_type)));
  }
}

void quantize_q8_block32(const float* x, int64_t n, int8_t* q, float* d, float* s, uint8_t* u,
                         int32_t* minus_128_sums) {
  constexpr int kB = tensor::kLegacyBlock;
  for (int64_t b = 0; b < n / kB; ++b, x += kB, q += kB, u += kB) {
    float amax = 0.0f;
    for (int j = 0; j < kB; ++j) amax = std::max(amax, std::fabs(x[j]));
    // llama.cpp's x86 path: the multiplier is 127/amax (not 1/d) and rounding is to nearest
    // even; its scalar reference differs in both, which flips some levels.
    const float scale = amax / 127.0f;
    const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < kB; ++j) {
      const float level = std::clamp(std::nearbyint(x[j] * inv), -128.0f, 127.0f);
      q[j] = static_cast<int8_t>(level);
      u[j] = static_cast<uint8_t>(q[j] + 128);
      sum += q[j];
    }
    d[b] = tensor::f16_to_f32(tensor::f32_to_f16(scale));
    s[b] = tensor::f16_to_f32(tensor::f32_to_f16(scale * static_cast<float>(sum)));
    minus_128_sums[b] = -128 * sum;
  }
}

void quantize_q8_k(const float* x, int64_t n, int8_t* q, float* d, int16_t* bsums) {
  constexpr int kB = tensor::kSuperBlock;
  tensor::BlockQ8_K block;
  for (int64_t b = 0; b < n / kB; ++b) {
    tensor::quantize_row(TensorType::Q8_K, x + b * kB, &block, kB);
    std::memcpy(q + b * kB, block.qs, kB);
    std::memcpy(bsums + b * (kB / 16), block.bsums, sizeof block.bsums);
    d[b] = block.d;
  }
}

void Activations::set(const float* x, int64_t n_rows, int64_t n_cols, int64_t stride) {
  x_ = x;
  n_rows_ = n_rows;
  n_cols_ = n_cols;
  stride_ = stride;
  std::fill(std::begin(have_), std::end(have_), false);
  have_[static_cast<int>(ActType::F32)] = true;
}

FloatRows Activations::float_rows(ActType type) const {
  switch (type) {
    case ActType::F32: return {x_, stride_};
    case ActType::F16: return {f16_.data(), n_cols_};
    case ActType::BF16: return {bf16_.data(), n_cols_};
    default: throw std::invalid_argument("float_rows: not a float form");
  }
}

void Activations::prepare(ActType type, ThreadPool* pool) {
  // Q8_0 and Q8_1 share one form.
  if (type == ActType::Q8_1) type = ActType::Q8_0;
  const int k = static_cast<int>(type);
  if (have_[k]) return;
  const int64_t n = n_cols_;
  // Rows are independent: split them between the pool's threads (a prefill has hundreds).
  auto for_rows = [&](auto&& quantize_row) {
    auto range = [&](int64_t r0, int64_t r1, int) {
      for (int64_t r = r0; r < r1; ++r) quantize_row(r);
    };
    if (pool) pool->run(n_rows_, range);
    else range(0, n_rows_, 0);
  };
  switch (type) {
    case ActType::F32: break;
    case ActType::F16:
      grow(f16_, n_rows_ * n);
      for_rows([&](int64_t r) { round_through_f16_simd(f32(r), n, f16_.data() + r * n); });
      break;
    case ActType::BF16:
      grow(bf16_, n_rows_ * n);
      grow(bf16_bits_, n_rows_ * n);
      for_rows([&](int64_t r) {
        float* rounded = bf16_.data() + r * n;
        round_through_bf16_simd(f32(r), n, rounded);
        for (int64_t i = 0; i < n; ++i) {  // exact: the rounded value's low 16 bits are zero
          uint32_t bits;
          std::memcpy(&bits, rounded + i, sizeof bits);
          bf16_bits_[r * n + i] = static_cast<uint16_t>(bits >> 16);
        }
      });
      break;
    case ActType::Q8_0:
    case ActType::Q8_1: {
      if (n % tensor::kLegacyBlock) throw std::invalid_argument("row length not a multiple of 32");
      const int64_t nb = n / tensor::kLegacyBlock;
      grow(q8_.q, n_rows_ * n);
      grow(q8_.d, n_rows_ * nb);
      grow(q8_.s, n_rows_ * nb);
      grow(q8_.u, n_rows_ * n);
      grow(q8_.minus_128_sums, n_rows_ * nb);
      for_rows([&](int64_t r) {
        quantize_q8_block32_simd(f32(r), n, q8_.q.data() + r * n, q8_.d.data() + r * nb, q8_.s.data() + r * nb,
                                 q8_.u.data() + r * n, q8_.minus_128_sums.data() + r * nb);
      });
      break;
    }
    case ActType::Q8_K: {
      if (n % tensor::kSuperBlock) throw std::invalid_argument("row length not a multiple of 256");
      const int64_t nb = n / tensor::kSuperBlock;
      grow(q8k_.q, n_rows_ * n);
      grow(q8k_.d, n_rows_ * nb);
      grow(q8k_.bsums, n_rows_ * (n / 16));
      for_rows([&](int64_t r) {
        quantize_q8_k_simd(f32(r), n, q8k_.q.data() + r * n, q8k_.d.data() + r * nb, q8k_.bsums.data() + r * (n / 16));
      });
      break;
    }
  }
  have_[k] = true;
}

}  // namespace nanoserve::kernels
