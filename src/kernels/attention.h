// Causal self-attention of one query head over a sequence's KV cache (F16 or Q8_0).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kv_type.h"

namespace nanoserve::kernels {

// The cache of one layer of one sequence, in blocks of block_size positions: position p is
// at slot p % block_size of block blocks[p / block_size]. Each KV head's part of a block is
// one contiguous tile (kv_tile_bytes). Blocks come in groups of group_blocks: KV head h's keys
// in block b start
//   h * head_stride + (b / group_blocks) * group_stride + (b % group_blocks) * block_stride
// bytes after k, its values as far after v (kv_block_offset() gives the part after h's).
// So a kernel reads one run of memory per head and block, and one run for a head's consecutive
// blocks of a group where block_stride is the tile's size:
// - keys transposed, one row of block_size slots per dimension: dimension d of slot t at
//   element d * block_size + t of the tile, so that scores against a block's positions are
//   vector multiply-adds, one position a lane, with no sums across lanes;
// - values as rows: slot t's values at element t * head_dim.
// F16 tiles are those elements. A Q8_0 tile is bytes of levels, then the scales (F16):
// - a key tile's levels as unsigned bytes (level + 128), four dimensions of a slot together,
//   rows of block_size such fours: dimension d of slot t at byte (d / 4 * block_size + t) * 4 +
//   d % 4 (kv_q8_key_byte), so that a 32-bit lane holds four dimensions of one position and the
//   CPU's byte dot products (AVX-512 VNNI's vpdpbusd: unsigned times signed bytes, four a lane)
//   sum them; then head_dim / 32 rows of block_size scales (the scale of dimensions [32g, 32g +
//   32) of slot t at g * block_size + t);
// - a value tile's levels as signed bytes, four slots of a dimension together, rows of head_dim
//   such fours: value i of slot t at byte (t / 4 * head_dim + i) * 4 + t % 4 (kv_q8_value_byte),
//   so that a 32-bit lane holds one dimension of four positions and a byte dot product with four
//   positions' weights (as unsigned bytes) sums them; then scales as a key tile's: head_dim / 32
//   rows of block_size (slot t's of block g at g * block_size + t), so that a kernel scales a
//   chunk's weights by them as vectors.
// A tile's levels take kv_q8_level_bytes: head_dim bytes a slot, the slots rounded up to fours.
struct KvView {
  const uint8_t* k;
  const uint8_t* v;
  const int32_t* blocks;
  int64_t block_size;
  int64_t block_stride;
  int64_t head_stride;
  int64_t group_blocks;
  int64_t group_stride;
  KvType type = KvType::F16;
};

// Where a Q8_0 tile's scales start (see KvView): after its head_dim * block_size levels.
inline const uint16_t* kv_q8_scales(const uint8_t* tile, int64_t head_dim, int64_t block_size) {
  return reinterpret_cast<const uint16_t*>(tile + kv_q8_level_bytes(head_dim, block_size));
}
inline uint16_t* kv_q8_scales(uint8_t* tile, int64_t head_dim, int64_t block_size) {
  return reinterpret_cast<uint16_t*>(tile + kv_q8_level_bytes(head_dim, block_size));
}

// Where dimension d of slot t lies among a Q8_0 key tile's levels (see KvView).
inline int64_t kv_q8_key_byte(int64_t d, int64_t slot, int64_t block_size) {
  return (d / 4 * block_size + slot) * 4 + d % 4;
}

// Where value i of slot t lies among a Q8_0 value tile's levels (see KvView).
inline int64_t kv_q8_value_byte(int64_t i, int64_t slot, int64_t head_dim) {
  return (slot / 4 * head_dim + i) * 4 + slot % 4;
}

// A chunk's weights (each times its value's scale) as unsigned bytes: level = round(x * 255 /
// largest) to nearest even, scale = largest / 255 (largest 0: every level 0).
struct KvQ8WeightScale {
  float scale, inv;
  explicit KvQ8WeightScale(float largest) : scale(largest / 255.0f), inv(largest > 0.0f ? 255.0f / largest : 0.0f) {}
  int32_t level(float x) const { return static_cast<int32_t>(std::nearbyint(x * inv)); }
};

// Stores one KV head's key and value (head_dim floats each) at `slot` of a block's key and value
// tiles, in the cache's type: rounded to F16, or quantized to Q8_0 as llama.cpp's CPU backend
// stores a q8_0 cache (its x86 quantize_row_q8_0, which quantize_q8_block32 reproduces).
void kv_store(KvType type, uint8_t* k_tile, uint8_t* v_tile, int64_t slot, const float* k, const float* v,
              int64_t head_dim, int64_t block_size);

// A query head quantized to Q8_0 as attention_heads quantizes it against a Q8_0 cache's keys
// (quantize_q8_block32): its levels, block scales, and -128 × each block's level sum.
struct KvQ8Query {
  int8_t levels[kKvQ8MaxHeadDim];
  float scales[kKvQ8MaxHeadDim / kKvQ8Block];
  int32_t minus_128_sums[kKvQ8MaxHeadDim / kKvQ8Block];

  void quantize(const float* q, int head_dim);
};

// A quantized query's dot product with the key at `slot` of a Q8_0 key tile, as attention_heads
// defines it (per block of 32: the integer dot of the levels, times both scales, added by a
// fused multiply-add), in scalar code.
float kv_q8_key_dot(const KvQ8Query& q, const uint8_t* tile, int64_t block_size, int64_t slot, int head_dim);

// Dimension d of the key at `slot` of a block's key tile, and value i of the one at `slot` of a
// value tile, as floats: the values the kernels compute with.
float kv_key_at(const KvView& kv, const uint8_t* tile, int64_t slot, int d, int head_dim);
float kv_value_at(const KvView& kv, const uint8_t* tile, int64_t slot, int i, int head_dim);

// Where block id `block` starts for KV head 0 (add kv_head * head_stride for another head).
inline int64_t kv_block_offset(const KvView& kv, int64_t block) {
  return block / kv.group_blocks * kv.group_stride + block % kv.group_blocks * kv.block_stride;
}

// The view moved to KV head kv_head's tiles: for_each_kv_run over it walks that head's blocks.
inline KvView kv_head_view(const KvView& kv, int64_t kv_head) {
  KvView head = kv;
  head.k += kv_head * kv.head_stride;
  head.v += kv_head * kv.head_stride;
  return head;
}

// One block's positions [first, first + count): where the block's keys and values start (see
// KvView). next_k / next_v start the following block (null for the last), so that a kernel can
// fetch it while it works on this one.
struct KvRun {
  int64_t first, count;
  const uint8_t *k, *v, *next_k, *next_v;
};

// Calls run(KvRun) for each block of positions [from, n_kv), in position order, from the block
// that holds `from` (its earlier positions included): a sliding window's rows read only the
// blocks their window touches (a windowed cache holds no others: KvCache).
template <class Run>
void for_each_kv_run(const KvView& kv, int64_t from, int64_t n_kv, Run&& run) {
  for (int64_t b = from / kv.block_size, first = b * kv.block_size; first < n_kv; first += kv.block_size, ++b) {
    const int64_t offset = kv_block_offset(kv, kv.blocks[b]);
    const bool last = first + kv.block_size >= n_kv;
    const int64_t next = last ? 0 : kv_block_offset(kv, kv.blocks[b + 1]);
    run(KvRun{first, std::min(n_kv - first, kv.block_size), kv.k + offset, kv.v + offset,
              last ? nullptr : kv.k + next, last ? nullptr : kv.v + next});
  }
}

// Grouped-query attention of n_rows rows of one sequence at consecutive positions (a decode
// row, a verify step's rows, a prompt's chunk), each with its heads_per_row query heads that
// share KV head kv_head: row r sees positions [0, n_kv + r). Head h (row h / heads_per_row) is
// at q + h * head_dim, its output at out + h * head_dim: out_h = sum_p softmax_p(scale *
// q_h·k_p) v_p over its row's positions. Computed in float from the cache's values (as llama.cpp's
// CPU flash attention does for prompt batches from an F16 cache): scores, max-subtracted exponentials, a
// weighted sum of the values, one division at the end. The heads of a pass share each read of
// the cache (a key dimension's row of a block, a position's values), also across rows; a
// head's result does not depend on the rows beside it (a verify row's equals a decode row's,
// bit for bit). From a Q8_0 cache, as llama.cpp's flash attention does: the query quantized to
// Q8_0 too (quantize_q8_block32), a score the sum over blocks g of 32 dimensions of the exact
// integer dot product of the levels times both scales (in order, each added by a fused
// multiply-add: s = fma(dot_g, key_scale_g * query_scale_g, s)), times `scale`; the values
// summed chunk by chunk of a block's slots (kKvQ8Chunk), per block of 32 dimensions: each
// softmax weight times its value's scale, quantized to an unsigned byte against the chunk's
// largest (KvQ8WeightScale; positions a row does not see weigh 0), the exact integer sum of
// those levels times the value levels, added by out = fma(sum, chunk scale, out) — what the
// CPU's byte dot products compute. scores needs room for n_rows * heads_per_row * (n_kv +
// n_rows - 1) floats.
// window > 0 (sliding-window layers): a row sees only the last `window` of its positions, its
// own included; the blocks wholly before the first row's window are not read (a windowed
// cache has let go of them), the other positions outside a row's window weigh zero.
// sinks (gpt-oss's attention sinks; null for none): a learned logit per head of a row (head j
// of every row takes sinks[j]), one more term of each softmax's denominator with no value:
// out_h = sum_p e^(s_p - m) v_p / (sum_p e^(s_p - m) + e^(sink - m)), m the largest of the
// scores and the sink (not scaled: llama.cpp adds it to the scaled scores).
// Uses the SIMD kernels of the best target this CPU supports.
void attention_heads(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head, int head_dim,
                     int64_t n_kv, float scale, float* scores, float* out, int64_t window = 0,
                     const float* sinks = nullptr);

// How many rows of heads_per_row heads share a pass of attention_heads over a cache of this
// type on the best target this CPU supports (1 where one row's heads fill it).
int attention_rows_per_pass(int heads_per_row, KvType type);

// The same in scalar code, one head at a time (the reference the SIMD version is tested against).
void attention_heads_reference(const float* q, int n_rows, int heads_per_row, const KvView& kv, int kv_head,
                               int head_dim, int64_t n_kv, float scale, float* scores, float* out, int64_t window = 0,
                               const float* sinks = nullptr);

// The first position a row that sees `sees` positions attends to (0 without a window).
inline int64_t window_start(int64_t sees, int64_t window) {
  return window > 0 ? std::max<int64_t>(0, sees - window) : 0;
}

}  // namespace nanoserve::kernels
