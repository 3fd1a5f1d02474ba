#include "tensor/interleave.h"

#include <cstring>

#include "tensor/blocks.h"

namespace nanoserve::tensor {
namespace {

constexpr size_t kScales = 2 * kInterleaveRows;  // bytes of the 8 fp16 scales
constexpr int kChunks = kLegacyBlock / 4;        // 4 elements of each row per chunk

}  // namespace

void interleave_q8_0(uint8_t* rows, int64_t n, uint8_t* tmp) {
  const int64_t blocks = n / kLegacyBlock;
  const size_t row_bytes = static_cast<size_t>(blocks) * sizeof(BlockQ8_0);
  std::memcpy(tmp, rows, kInterleaveRows * row_bytes);
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = rows + b * kQ8_0x8BlockBytes;
    for (int j = 0; j < kInterleaveRows; ++j) {
      BlockQ8_0 block;
      std::memcpy(&block, tmp + j * row_bytes + b * sizeof(BlockQ8_0), sizeof block);
      std::memcpy(out + 2 * j, &block.d, 2);
      for (int k = 0; k < kChunks; ++k)
        for (int t = 0; t < 4; ++t)
          out[kScales + 32 * k + 4 * j + t] = static_cast<uint8_t>(block.qs[4 * k + t] ^ 0x80);  // level + 128
    }
  }
}

void deinterleave_q8_0_row(const uint8_t* group, int64_t n, int lane, uint8_t* out) {
  for (int64_t b = 0; b < n / kLegacyBlock; ++b) {
    const uint8_t* in = group + b * kQ8_0x8BlockBytes;
    BlockQ8_0 block;
    std::memcpy(&block.d, in + 2 * lane, 2);
    for (int k = 0; k < kChunks; ++k)
      for (int t = 0; t < 4; ++t) block.qs[4 * k + t] = static_cast<int8_t>(in[kScales + 32 * k + 4 * lane + t] ^ 0x80);
    std::memcpy(out + b * sizeof(BlockQ8_0), &block, sizeof block);
  }
}

}  // namespace nanoserve::tensor
