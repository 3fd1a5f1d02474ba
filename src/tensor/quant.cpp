// Row-level dispatch: one table entry per supported type.
#include "tensor/quant.h"

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/codecs.h"

namespace nanoserve::tensor {
namespace {

using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

struct Codec {
  TensorType type;
  int64_t block_elems;
  DequantizeFn dequantize;
  QuantizeFn quantize;
};

// Blocks are copied through a local so that src/dst need no particular alignment.
template <class Block>
void dequantize_blocks(const void* src, float* dst, int64_t n) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n / Block::kElems; ++i) {
    Block b;
    std::memcpy(&b, bytes + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
    decode_block(b, dst + i * Block::kElems);
  }
}

template <class Block>
void quantize_blocks(const float* src, void* dst, int64_t n) {
  auto* bytes = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / Block::kElems; ++i) {
    Block b;
    encode_block(src + i * Block::kElems, b);
    std::memcpy(bytes + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
  }
}

template <class Block>
constexpr Codec block_codec(TensorType type) {
  return {type, Block::kElems, &dequantize_blocks<Block>, &quantize_blocks<Block>};
}

constexpr std::array kCodecs = {
    Codec{TensorType::F32, 1, &dequantize_f32, &quantize_f32},
    Codec{TensorType::F16, 1, &dequantize_f16, &quantize_f16},
    Codec{TensorType::BF16, 1, &dequantize_bf16, &quantize_bf16},
    block_codec<BlockQ4_0>(TensorType::Q4_0),
    block_codec<BlockQ4_1>(TensorType::Q4_1),
    block_codec<BlockQ5_0>(TensorType::Q5_0),
    block_codec<BlockQ5_1>(TensorType::Q5_1),
    block_codec<BlockQ8_0>(TensorType::Q8_0),
    block_codec<BlockQ2_K>(TensorType::Q2_K),
    block_codec<BlockQ3_K>(TensorType::Q3_K),
    block_codec<BlockQ4_K>(TensorType::Q4_K),
    block_codec<BlockQ5_K>(TensorType::Q5_K),
    block_codec<BlockQ6_K>(TensorType::Q6_K),
    block_codec<BlockQ8_K>(TensorType::Q8_K),
    block_codec<BlockIQ4_NL>(TensorType::IQ4_NL),
    block_codec<BlockIQ4_XS>(TensorType::IQ4_XS),
    block_codec<BlockMXFP4>(TensorType::MXFP4),
};

// The IQ4 encoders with importance weights, one per element (src and importance advance together).
template <class Block>
void quantize_blocks_weighted(const float* src, const float* importance, void* dst, int64_t n) {
  auto* bytes = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n / Block::kElems; ++i) {
    Block b;
    encode_block(src + i * Block::kElems, b, importance + i * Block::kElems);
    std::memcpy(bytes + i * static_cast<int64_t>(sizeof(Block)), &b, sizeof(Block));
  }
}

const Codec* find_codec(TensorType type) {
  for (const Codec& c : kCodecs)
    if (c.type == type) return &c;
  return nullptr;
}

std::string describe(TensorType type) {
  const gguf::TypeInfo* info = gguf::type_info(static_cast<uint32_t>(type));
  return info ? std::string(info->name) : "type id " + std::to_string(static_cast<uint32_t>(type));
}

const Codec& checked_codec(TensorType type, int64_t n, const char* what) {
  const Codec* c = find_codec(type);
  if (!c) throw std::invalid_argument(std::string(what) + ": unsupported tensor type " + describe(type));
  if (n < 0 || n % c->block_elems != 0)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) + " elements is not a multiple of " +
                                std::to_string(c->block_elems) + " for " + describe(type));
  return *c;
}

}  // namespace

bool can_dequantize(TensorType type) { return find_codec(type) != nullptr; }
bool can_quantize(TensorType type) { return find_codec(type) != nullptr; }

void dequantize_row(TensorType type, const void* src, float* dst, int64_t n) {
  checked_codec(type, n, "dequantize_row").dequantize(src, dst, n);
}

void quantize_row(TensorType type, const float* src, void* dst, int64_t n) {
  checked_codec(type, n, "quantize_row").quantize(src, dst, n);
}

bool can_quantize_with_importance(TensorType type) {
  return type == TensorType::IQ4_NL || type == TensorType::IQ4_XS || type == TensorType::MXFP4;
}

void quantize_row_with_importance(TensorType type, const float* src, const float* importance, void* dst, int64_t n) {
  const Codec& c = checked_codec(type, n, "quantize_row_with_importance");
  if (!can_quantize_with_importance(type))
    throw std::invalid_argument("quantize_row_with_importance: " + describe(type) +
                                " with importance weights is not supported (llama.cpp's imatrix search for it is not "
                                "reproduced)");
  if (importance == nullptr) return c.quantize(src, dst, n);
  switch (type) {
    case TensorType::IQ4_NL: return quantize_blocks_weighted<BlockIQ4_NL>(src, importance, dst, n);
    case TensorType::IQ4_XS: return quantize_blocks_weighted<BlockIQ4_XS>(src, importance, dst, n);
    default: return c.quantize(src, dst, n);  // MXFP4: ggml ignores the weights too
  }
}

}  // namespace nanoserve::tensor
