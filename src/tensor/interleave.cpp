#include "tensor/interleave.h"

#include <cstring>
#include <stdexcept>

#include "tensor/blocks.h"
#include "tensor/codecs.h"

namespace nanoserve::tensor {
namespace {

using gguf::TensorType;

constexpr int kChunks = kLegacyBlock / 4;  // 4 elements of each row per chunk

// One row's block b in file layout: its scale (fp16 bits, or MXFP4's exponent byte) and its 32
// unsigned levels u.
struct RowBlock {
  uint16_t d;
  uint8_t u[kLegacyBlock];
};

// Bytes of a block of 32's 8 scales: fp16s, or MXFP4's one-byte exponents.
size_t scale_bytes(TensorType type) { return type == TensorType::MXFP4 ? kInterleaveRows : 2 * kInterleaveRows; }
size_t scale_size(TensorType type) { return scale_bytes(type) / kInterleaveRows; }

// The interleaved types of 256-element super-blocks.
bool is_super_block(TensorType type) {
  return type == TensorType::Q4_K || type == TensorType::Q6_K || type == TensorType::IQ4_XS;
}

bool is_float(TensorType type) {
  return type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16;
}

size_t file_block_bytes(TensorType type) {
  switch (type) {
    case TensorType::F32: return 4;
    case TensorType::F16:
    case TensorType::BF16: return 2;
    case TensorType::Q8_0: return sizeof(BlockQ8_0);
    case TensorType::Q5_0: return sizeof(BlockQ5_0);
    case TensorType::Q4_0: return sizeof(BlockQ4_0);
    case TensorType::IQ4_NL: return sizeof(BlockIQ4_NL);
    case TensorType::MXFP4: return sizeof(BlockMXFP4);
    case TensorType::Q4_K: return sizeof(BlockQ4_K);
    case TensorType::IQ4_XS: return sizeof(BlockIQ4_XS);
    case TensorType::Q6_K: return sizeof(BlockQ6_K);
    default: throw std::invalid_argument("no interleaved layout for this type");
  }
}

RowBlock read_block(TensorType type, const uint8_t* p) {
  RowBlock r{};
  std::memcpy(&r.d, p, scale_size(type));
  if (type == TensorType::Q8_0) {
    for (int i = 0; i < kLegacyBlock; ++i) r.u[i] = static_cast<uint8_t>(p[2 + i] ^ 0x80);  // level + 128
    return r;
  }
  const uint8_t* qs = p + (type == TensorType::Q5_0 ? offsetof(BlockQ5_0, qs) : scale_size(type));
  uint32_t qh = 0;
  if (type == TensorType::Q5_0) std::memcpy(&qh, p + offsetof(BlockQ5_0, qh), sizeof qh);
  for (int i = 0; i < kLegacyBlock / 2; ++i) {  // element i: low nibble of qs[i]; i + 16: high nibble
    r.u[i] = static_cast<uint8_t>((qs[i] & 0x0f) | ((qh >> i) & 1) << 4);
    r.u[i + 16] = static_cast<uint8_t>((qs[i] >> 4) | ((qh >> (i + 16)) & 1) << 4);
  }
  return r;
}

void write_block(TensorType type, const RowBlock& r, uint8_t* p) {
  std::memcpy(p, &r.d, scale_size(type));
  if (type == TensorType::Q8_0) {
    for (int i = 0; i < kLegacyBlock; ++i) p[2 + i] = static_cast<uint8_t>(r.u[i] ^ 0x80);
    return;
  }
  uint8_t* qs = p + (type == TensorType::Q5_0 ? offsetof(BlockQ5_0, qs) : scale_size(type));
  uint32_t qh = 0;
  for (int i = 0; i < kLegacyBlock / 2; ++i) {
    qs[i] = static_cast<uint8_t>((r.u[i] & 0x0f) | (r.u[i + 16] & 0x0f) << 4);
    qh |= static_cast<uint32_t>(r.u[i] >> 4 & 1) << i | static_cast<uint32_t>(r.u[i + 16] >> 4 & 1) << (i + 16);
  }
  if (type == TensorType::Q5_0) std::memcpy(p + offsetof(BlockQ5_0, qh), &qh, sizeof qh);
}

// ---- Blocks of 32 (Q8_0, Q5_0, Q4_0, IQ4_NL, MXFP4) ----
// A group's block b is 8 × sizeof(block) bytes: first the 8 rows' scales (fp16, row j at bytes
// 2j..2j+1; MXFP4's exponent bytes, row j at byte j), then their levels as unsigned numbers u
// (Q8_0: level + 128; Q5_0: level + 16; Q4_0: level + 8, which is what the file stores for
// those two; IQ4_NL, MXFP4: the nibble, their table's index), by chunk: chunk k holds elements
// 4k..4k+3 of each row, row j at bytes 4j..4j+3 of a 32-byte vector (int32 lane j: row j).
//   Q8_0: 8 chunks of 32 bytes, u as bytes.
//   Q4_0, IQ4_NL, MXFP4: 4 vectors of 32 bytes; vector m holds chunk 2m in the low nibbles and
//         chunk 2m + 1 in the high nibbles.
//   Q5_0: as Q4_0 for the low 4 bits of u, then 8 words of 32 bits: bit p of word k is the
//         fifth bit of byte p of chunk k.

// Byte p = 4j + t of chunk k of an interleaved block (row j, element 4k + t of it): where its
// u lives and how (a byte, a nibble, a fifth bit).
void put_level(TensorType type, uint8_t* block, int k, int p, uint8_t u) {
  const size_t kScales = scale_bytes(type);
  if (type == TensorType::Q8_0) {
    block[kScales + 32 * k + p] = u;
    return;
  }
  uint8_t& nibbles = block[kScales + 32 * (k / 2) + p];
  nibbles = static_cast<uint8_t>(k % 2 ? (nibbles & 0x0f) | (u & 0x0f) << 4 : (nibbles & 0xf0) | (u & 0x0f));
  if (type == TensorType::Q5_0) {
    uint8_t& bits = block[kScales + 128 + 4 * k + p / 8];
    bits = static_cast<uint8_t>((bits & ~(1 << p % 8)) | (u >> 4 & 1) << p % 8);
  }
}

uint8_t get_level(TensorType type, const uint8_t* block, int k, int p) {
  const size_t kScales = scale_bytes(type);
  if (type == TensorType::Q8_0) return block[kScales + 32 * k + p];
  const uint8_t nibbles = block[kScales + 32 * (k / 2) + p];
  const uint8_t low = k % 2 ? nibbles >> 4 : nibbles & 0x0f;
  if (type != TensorType::Q5_0) return low;
  return static_cast<uint8_t>(low | (block[kScales + 128 + 4 * k + p / 8] >> p % 8 & 1) << 4);
}

// Float rows (8 of n elements of U's size, at `in`) as interleaved blocks of one element: block
// b holds element b of each row, row j at b * 8 + j. A pair of groups then holds, for each
// element, the 16 rows' values side by side: a vector of them is 16 outputs' next term
// (kernels/float_panels-inl.h).
template <class U>
void transpose_rows(const uint8_t* in, int64_t n, uint8_t* out) {
  for (int j = 0; j < kInterleaveRows; ++j) {
    for (int64_t b = 0; b < n; ++b) {
      U v;
      std::memcpy(&v, in + (j * n + b) * sizeof(U), sizeof(U));
      std::memcpy(out + (b * kInterleaveRows + j) * sizeof(U), &v, sizeof(U));
    }
  }
}

// ---- Q4_K ----
// Super-blocks (256 elements, 8 × 144 bytes): the 8 rows' d (fp16, bytes 0..15) and dmin
// (16..31); their 6-bit scales and mins by index i = 8 × sub-block + row: the low 4 bits of scale
// and min in the two nibbles of byte 32 + i, the top 2 bits of each (scale's in bits 0-1, min's
// in bits 2-3) in a nibble of byte 96 + i % 32 (low nibble for i < 32); then sub-block j's levels
// (0..15) at 128 + 128 j as Q4_0's 4 vectors.
constexpr size_t kQ4KScaleLow = 32, kQ4KScaleHigh = 96, kQ4KLevels = 128;

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof v); }

// Row `row`'s 32 four-bit levels of one sub-block, as nibble `nibble` (0: low, 1: high) of
// the bytes at src, into the sub-block's 4 nibble vectors: byte 4 row + t of vector m holds
// element 8m + t (low nibble) and element 8m + 4 + t (high nibble). Four bytes at a time.
void put_nibble_vectors(const uint8_t* src, int nibble, int row, uint8_t* vectors) {
  constexpr uint32_t kLow = 0x0f0f0f0f;
  for (int m = 0; m < 4; ++m) {
    const uint32_t first = load32(src + 8 * m) >> (4 * nibble) & kLow;
    const uint32_t second = load32(src + 8 * m + 4) >> (4 * nibble) & kLow;
    store32(vectors + 32 * m + 4 * row, first | second << 4);
  }
}

void interleave_q4_k_block(const uint8_t* const* in, uint8_t* out) {
  std::memset(out, 0, kInterleaveRows * sizeof(BlockQ4_K));
  for (int row = 0; row < kInterleaveRows; ++row) {
    BlockQ4_K b;
    std::memcpy(&b, in[row], sizeof b);
    std::memcpy(out + 2 * row, &b.d, 2);
    std::memcpy(out + 16 + 2 * row, &b.dmin, 2);
    for (int j = 0; j < 8; ++j) {
      const auto [sc, m] = scale_min_k4(b.scales, j);
      const int i = 8 * j + row;
      out[kQ4KScaleLow + i] = static_cast<uint8_t>((sc & 0x0f) | (m & 0x0f) << 4);
      const int high = sc >> 4 | (m >> 4) << 2;
      out[kQ4KScaleHigh + i % 32] |= static_cast<uint8_t>(i < 32 ? high : high << 4);
      // Sub-block j: nibble j % 2 of qs[32 (j / 2) + e].
      put_nibble_vectors(b.qs + 32 * (j / 2), j % 2, row, out + kQ4KLevels + 128 * j);
    }
  }
}

void deinterleave_q4_k_block(const uint8_t* in, int row, uint8_t* out) {
  BlockQ4_K b{};
  std::memcpy(&b.d, in + 2 * row, 2);
  std::memcpy(&b.dmin, in + 16 + 2 * row, 2);
  for (int j = 0; j < 8; ++j) {
    const int i = 8 * j + row;
    const uint8_t low = in[kQ4KScaleLow + i];
    const uint8_t high = i < 32 ? in[kQ4KScaleHigh + i] & 0x0f : in[kQ4KScaleHigh + i - 32] >> 4;
    set_scale_min_k4(b.scales, j, (low & 0x0f) | (high & 3) << 4, (low >> 4) | (high >> 2) << 4);
    for (int e = 0; e < 32; ++e) {
      const int k = e / 4, p = 4 * row + e % 4;
      const uint8_t byte = in[kQ4KLevels + 128 * j + 32 * (k / 2) + p];
      const uint8_t u = k % 2 ? byte >> 4 : byte & 0x0f;
      b.qs[32 * (j / 2) + e] |= static_cast<uint8_t>(u << (4 * (j % 2)));
    }
  }
  std::memcpy(out, &b, sizeof b);
}

// ---- Q6_K ----
// Super-blocks of 8 × 210 bytes: the 8 rows' d (bytes 0..15); their int8 scales of 16 elements
// in pairs, byte 16 + 16 i + 2 row + h holding scale 2i + h of the row; then per sub-block j of
// 32, at 144 + 192 j, the low 4 bits of its levels u (0..63) as Q4_0's 4 vectors and their top 2
// bits in 2 more: bits 2h..2h+1 of byte p of vector v belong to byte p of chunk 4v + h.
constexpr size_t kQ6KScales = 16, kQ6KLevels = 144, kQ6KSubBlock = 192;

// Writes u (0..63) of element e into a Q6_K block: low 4 bits to ql, top 2 to qh.
void set_q6_k_level(BlockQ6_K& b, int e, uint8_t u) {  // b starts zeroed
  const int c = e / 128, group = e % 128 / 32, l = e % 32;
  b.ql[64 * c + 32 * (group % 2) + l] |= static_cast<uint8_t>((u & 0x0f) << (4 * (group / 2)));
  b.qh[32 * c + l] |= static_cast<uint8_t>((u >> 4) << (2 * group));
}

// Sub-block j of a Q6_K block is group g = j % 4 of half c = j / 4: element l's low 4 bits
// are nibble g / 2 of ql[64c + 32 (g % 2) + l], its top 2 bits bits 2g, 2g + 1 of qh[32c + l].
void interleave_q6_k_block(const uint8_t* const* in, uint8_t* out) {
  std::memset(out, 0, kInterleaveRows * sizeof(BlockQ6_K));
  for (int row = 0; row < kInterleaveRows; ++row) {
    BlockQ6_K b;
    std::memcpy(&b, in[row], sizeof b);
    std::memcpy(out + 2 * row, &b.d, 2);
    for (int g = 0; g < 16; ++g) out[kQ6KScales + 16 * (g / 2) + 2 * row + g % 2] = static_cast<uint8_t>(b.scales[g]);
    for (int j = 0; j < 8; ++j) {
      const int c = j / 4, g = j % 4;
      uint8_t* sub = out + kQ6KLevels + kQ6KSubBlock * j;
      put_nibble_vectors(b.ql + 64 * c + 32 * (g % 2), g / 2, row, sub);
      for (int v = 0; v < 2; ++v) {  // chunk 4v + h's top bits at bits 2h, 2h + 1 of each byte
        uint32_t top = 0;
        for (int h = 0; h < 4; ++h) top |= (load32(b.qh + 32 * c + 16 * v + 4 * h) >> (2 * g) & 0x03030303) << (2 * h);
        store32(sub + 128 + 32 * v + 4 * row, top);
      }
    }
  }
}

void deinterleave_q6_k_block(const uint8_t* in, int row, uint8_t* out) {
  BlockQ6_K b{};
  std::memcpy(&b.d, in + 2 * row, 2);
  for (int g = 0; g < 16; ++g) b.scales[g] = static_cast<int8_t>(in[kQ6KScales + 16 * (g / 2) + 2 * row + g % 2]);
  for (int e = 0; e < kSuperBlock; ++e) {
    const int j = e / 32, k = e % 32 / 4, p = 4 * row + e % 4;
    const uint8_t* sub = in + kQ6KLevels + kQ6KSubBlock * j;
    const uint8_t nibbles = sub[32 * (k / 2) + p];
    const uint8_t low = k % 2 ? nibbles >> 4 : nibbles & 0x0f;
    set_q6_k_level(b, e, static_cast<uint8_t>(low | ((sub[128 + 32 * (k / 4) + p] >> (2 * (k % 4))) & 3) << 4));
  }
  std::memcpy(out, &b, sizeof b);
}

// ---- IQ4_XS ----
// Super-blocks (256 elements, 8 × 136 bytes): the 8 rows' d (fp16, bytes 0..15); their 6-bit
// scales (as stored: the signed scale + 32) by index i = 8 × sub-block + row: the low 4 bits in a
// nibble of byte 16 + i % 32 (low nibble for i < 32), the top 2 bits in bits 2 (i / 16), +1 of
// byte 48 + i % 16; then sub-block j's levels (table indices) at 64 + 128 j as Q4_0's 4 vectors.
constexpr size_t kIQ4XSScaleLow = 16, kIQ4XSScaleHigh = 48, kIQ4XSLevels = 64;

// Sub-block j of an IQ4_XS block as 32 bytes, one index per element (its qs hold element l in
// the low nibble of byte 16 j + l and element l + 16 in the high nibble).
void iq4_xs_indices(const BlockIQ4_XS& b, int j, uint8_t* out) {
  for (int l = 0; l < 16; ++l) {
    out[l] = b.qs[16 * j + l] & 0x0f;
    out[l + 16] = b.qs[16 * j + l] >> 4;
  }
}

void interleave_iq4_xs_block(const uint8_t* const* in, uint8_t* out) {
  std::memset(out, 0, kInterleaveRows * sizeof(BlockIQ4_XS));
  for (int row = 0; row < kInterleaveRows; ++row) {
    BlockIQ4_XS b;
    std::memcpy(&b, in[row], sizeof b);
    std::memcpy(out + 2 * row, &b.d, 2);
    for (int j = 0; j < 8; ++j) {
      const int i = 8 * j + row, sc = iq4_xs_scale(b, j);
      out[kIQ4XSScaleLow + i % 32] |= static_cast<uint8_t>(i < 32 ? sc & 0x0f : (sc & 0x0f) << 4);
      out[kIQ4XSScaleHigh + i % 16] |= static_cast<uint8_t>((sc >> 4) << (2 * (i / 16)));
      uint8_t indices[32];
      iq4_xs_indices(b, j, indices);
      put_nibble_vectors(indices, 0, row, out + kIQ4XSLevels + 128 * j);
    }
  }
}

void deinterleave_iq4_xs_block(const uint8_t* in, int row, uint8_t* out) {
  BlockIQ4_XS b{};
  std::memcpy(&b.d, in + 2 * row, 2);
  for (int j = 0; j < 8; ++j) {
    const int i = 8 * j + row;
    const uint8_t low = in[kIQ4XSScaleLow + i % 32];
    const int sc = (i < 32 ? low & 0x0f : low >> 4) | ((in[kIQ4XSScaleHigh + i % 16] >> (2 * (i / 16))) & 3) << 4;
    b.scales_l[j / 2] |= static_cast<uint8_t>((sc & 0x0f) << (4 * (j % 2)));
    b.scales_h |= static_cast<uint16_t>((sc >> 4) << (2 * j));
    for (int e = 0; e < 32; ++e) {
      const int k = e / 4, p = 4 * row + e % 4;
      const uint8_t byte = in[kIQ4XSLevels + 128 * j + 32 * (k / 2) + p];
      const uint8_t u = k % 2 ? byte >> 4 : byte & 0x0f;
      b.qs[16 * j + e % 16] |= static_cast<uint8_t>(u << (4 * (e / 16)));
    }
  }
  std::memcpy(out, &b, sizeof b);
}

}  // namespace

bool has_interleaved_layout(TensorType type) {
  return type == TensorType::Q8_0 || type == TensorType::Q5_0 || type == TensorType::Q4_0 ||
         type == TensorType::IQ4_NL || type == TensorType::MXFP4 || is_super_block(type) || is_float(type);
}

int64_t interleaved_block_elems(TensorType type) {
  if (is_float(type)) return 1;
  return is_super_block(type) ? kSuperBlock : kLegacyBlock;
}

size_t interleaved_block_bytes(TensorType type) { return kInterleaveRows * file_block_bytes(type); }

void interleave_rows(TensorType type, uint8_t* rows, int64_t n, uint8_t* tmp) {
  const int64_t blocks = n / interleaved_block_elems(type);
  const size_t block_bytes = file_block_bytes(type), row_bytes = static_cast<size_t>(blocks) * block_bytes;
  std::memcpy(tmp, rows, kInterleaveRows * row_bytes);
  if (type == TensorType::F32) return transpose_rows<uint32_t>(tmp, n, rows);
  if (is_float(type)) return transpose_rows<uint16_t>(tmp, n, rows);
  if (is_super_block(type)) {
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* in[kInterleaveRows];
      for (int j = 0; j < kInterleaveRows; ++j) in[j] = tmp + j * row_bytes + b * block_bytes;
      uint8_t* out = rows + b * interleaved_block_bytes(type);
      if (type == TensorType::Q4_K)
        interleave_q4_k_block(in, out);
      else if (type == TensorType::Q6_K)
        interleave_q6_k_block(in, out);
      else
        interleave_iq4_xs_block(in, out);
    }
    return;
  }
  const bool nibbles_only = type == TensorType::Q4_0 || type == TensorType::IQ4_NL || type == TensorType::MXFP4;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = rows + b * interleaved_block_bytes(type);
    std::memset(out, 0, interleaved_block_bytes(type));
    for (int j = 0; j < kInterleaveRows; ++j) {
      const RowBlock r = read_block(type, tmp + j * row_bytes + b * block_bytes);
      std::memcpy(out + scale_size(type) * j, &r.d, scale_size(type));
      if (nibbles_only) {  // a whole byte at a time (put_level, a bit field at a time, slowed a large file's load)
        for (int m = 0; m < kChunks / 2; ++m)
          for (int t = 0; t < 4; ++t)
            out[scale_bytes(type) + 32 * m + 4 * j + t] = static_cast<uint8_t>(r.u[8 * m + t] | r.u[8 * m + 4 + t] << 4);
        continue;
      }
      for (int k = 0; k < kChunks; ++k)
        for (int t = 0; t < 4; ++t) put_level(type, out, k, 4 * j + t, r.u[4 * k + t]);
    }
  }
}

void pair_groups(TensorType type, uint8_t* rows, int64_t n, uint8_t* tmp) {
  const int64_t blocks = n / interleaved_block_elems(type);
  const size_t block_bytes = interleaved_block_bytes(type), group_bytes = blocks * block_bytes;
  std::memcpy(tmp, rows, 2 * group_bytes);
  for (int64_t b = 0; b < blocks; ++b)
    for (int g = 0; g < 2; ++g)
      std::memcpy(rows + (2 * b + g) * block_bytes, tmp + g * group_bytes + b * block_bytes, block_bytes);
}

GroupBlocks group_blocks(TensorType type, int64_t n, int64_t n_out, int64_t o) {
  const uint64_t block_bytes = interleaved_block_bytes(type);
  const uint64_t row_bytes = n / interleaved_block_elems(type) * file_block_bytes(type);
  const int64_t pair = o / kPairRows;
  if ((pair + 1) * kPairRows <= n_out) {
    const uint64_t half = o % kPairRows / kInterleaveRows;
    return {pair * kPairRows * row_bytes + half * block_bytes, 2 * block_bytes};
  }
  return {o / kInterleaveRows * kInterleaveRows * row_bytes, block_bytes};
}

void deinterleave_row(TensorType type, const uint8_t* first_block, uint64_t stride, int64_t n, int lane,
                      uint8_t* out) {
  const size_t block_bytes = file_block_bytes(type);
  if (is_float(type)) {
    for (int64_t b = 0; b < n; ++b)
      std::memcpy(out + b * block_bytes, first_block + b * stride + lane * block_bytes, block_bytes);
    return;
  }
  if (is_super_block(type)) {
    for (int64_t b = 0; b < n / kSuperBlock; ++b) {
      const uint8_t* in = first_block + b * stride;
      if (type == TensorType::Q4_K)
        deinterleave_q4_k_block(in, lane, out + b * block_bytes);
      else if (type == TensorType::Q6_K)
        deinterleave_q6_k_block(in, lane, out + b * block_bytes);
      else
        deinterleave_iq4_xs_block(in, lane, out + b * block_bytes);
    }
    return;
  }
  for (int64_t b = 0; b < n / kLegacyBlock; ++b) {
    const uint8_t* in = first_block + b * stride;
    RowBlock r;
    std::memcpy(&r.d, in + scale_size(type) * lane, scale_size(type));
    for (int k = 0; k < kChunks; ++k)
      for (int t = 0; t < 4; ++t) r.u[4 * k + t] = get_level(type, in, k, 4 * lane + t);
    write_block(type, r, out + b * block_bytes);
  }
}

}  // namespace nanoserve::tensor
