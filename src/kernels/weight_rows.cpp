#include "kernels/weight_rows.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "tensor/blocks.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

using tensor::f16_to_f32;
constexpr int kQK = tensor::kSuperBlock;
constexpr int kB = tensor::kLegacyBlock;

template <class Block>
Block load(const uint8_t* row, int64_t i) {
  Block b;
  std::memcpy(&b, row + i * sizeof(Block), sizeof(Block));
  return b;
}

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Q4_x / Q5_x: element j is the low nibble of qs[j], element j+16 the high one; the fifth
// bit of element j is bit j of qh.
void legacy_levels(const uint8_t* qs, uint32_t qh, int8_t* q, int offset) {
  for (int j = 0; j < kB / 2; ++j) {
    const int lo = (qs[j] & 0x0f) | static_cast<int>((qh >> j) & 1) << 4;
    const int hi = (qs[j] >> 4) | static_cast<int>((qh >> (j + kB / 2)) & 1) << 4;
    q[j] = static_cast<int8_t>(lo - offset);
    q[j + kB / 2] = static_cast<int8_t>(hi - offset);
  }
}

// IQ4_NL, IQ4_XS (per sub-block of 32) and MXFP4: nibbles as Q4_0's, each an index into the
// type's table of levels.
void table_levels(const uint8_t* qs, const int8_t* table, int8_t* q) {
  for (int j = 0; j < kB / 2; ++j) {
    q[j] = table[qs[j] & 0x0f];
    q[j + kB / 2] = table[qs[j] >> 4];
  }
}

void decode_legacy(TensorType type, const uint8_t* row, int64_t n, DecodedRow& out) {
  for (int64_t i = 0; i < n / kB; ++i) {
    int8_t* q = out.q.data() + i * kB;
    switch (type) {
      case TensorType::Q4_0: {
        const auto b = load<tensor::BlockQ4_0>(row, i);
        legacy_levels(b.qs, 0, q, 8);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::Q4_1: {
        const auto b = load<tensor::BlockQ4_1>(row, i);
        legacy_levels(b.qs, 0, q, 0);
        out.d[i] = f16_to_f32(b.d);
        out.dmin[i] = f16_to_f32(b.m);
        break;
      }
      case TensorType::Q5_0: {
        const auto b = load<tensor::BlockQ5_0>(row, i);
        legacy_levels(b.qs, load_u32(b.qh), q, 16);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::Q5_1: {
        const auto b = load<tensor::BlockQ5_1>(row, i);
        legacy_levels(b.qs, load_u32(b.qh), q, 0);
        out.d[i] = f16_to_f32(b.d);
        out.dmin[i] = f16_to_f32(b.m);
        break;
      }
      case TensorType::Q8_0: {
        const auto b = load<tensor::BlockQ8_0>(row, i);
        std::memcpy(q, b.qs, kB);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::IQ4_NL: {
        const auto b = load<tensor::BlockIQ4_NL>(row, i);
        table_levels(b.qs, tensor::kIQ4Levels, q);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::MXFP4: {
        const auto b = load<tensor::BlockMXFP4>(row, i);
        table_levels(b.qs, tensor::kMXFP4Levels, q);
        out.d[i] = tensor::mxfp4_scale(b.e);
        break;
      }
      default: break;
    }
  }
}

int scale_q3k(const uint8_t* s, int j) {
  const int low = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}

void decode_q2_k(const tensor::BlockQ2_K& b, int8_t* q, int16_t* sc, int16_t* mn) {
  for (int e = 0; e < kQK; e += 16) {  // 2-bit fields: element 128c + 32k + l in byte 32c + l
    const uint8_t* bytes = b.qs + 32 * (e / 128) + e % 32;
    const int shift = 2 * (e % 128 / 32);
    for (int l = 0; l < 16; ++l) q[e + l] = static_cast<int8_t>((bytes[l] >> shift) & 3);
    sc[e / 16] = b.scales[e / 16] & 0x0f;
    mn[e / 16] = b.scales[e / 16] >> 4;
  }
}

void decode_q3_k(const tensor::BlockQ3_K& b, int8_t* q, int16_t* sc) {
  for (int e = 0; e < kQK; e += 16) {
    const int c = e / 128, group = e % 128 / 32;
    const uint8_t* bytes = b.qs + 32 * c + e % 32;
    const uint8_t* high = b.hmask + e % 32;
    const int hbit = 1 << (4 * c + group);
    for (int l = 0; l < 16; ++l)
      q[e + l] = static_cast<int8_t>(((bytes[l] >> (2 * group)) & 3) - ((high[l] & hbit) ? 0 : 4));
    sc[e / 16] = static_cast<int16_t>(scale_q3k(b.scales, e / 16));
  }
}

template <class Block>
void decode_q45_k(const Block& b, const uint8_t* qh, int8_t* q, int16_t* sc, int16_t* mn) {
  for (int j = 0; j < 8; ++j) {  // sub-block j of 32: nibble j % 2 of chunk j / 2's bytes
    const uint8_t* bytes = b.qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 32; ++l)
      q[32 * j + l] = static_cast<int8_t>(((bytes[l] >> shift) & 0x0f) | (qh ? ((qh[l] >> j) & 1) << 4 : 0));
    int s, m;
    scale_min_k4(b.scales, j, s, m);
    sc[2 * j] = sc[2 * j + 1] = static_cast<int16_t>(s);
    mn[2 * j] = mn[2 * j + 1] = static_cast<int16_t>(m);
  }
}

void decode_q6_k(const tensor::BlockQ6_K& b, int8_t* q, int16_t* sc) {
  for (int e = 0; e < kQK; e += 16) {
    const int c = e / 128, group = e % 128 / 32, l0 = e % 32;
    const uint8_t* ql = b.ql + 64 * c + 32 * (group % 2) + l0;
    const uint8_t* qh = b.qh + 32 * c + l0;
    const int low_shift = 4 * (group / 2);
    for (int l = 0; l < 16; ++l)
      q[e + l] = static_cast<int8_t>((((ql[l] >> low_shift) & 0x0f) | ((qh[l] >> (2 * group)) & 3) << 4) - 32);
    sc[e / 16] = b.scales[e / 16];
  }
}

void decode_k(TensorType type, const uint8_t* row, int64_t n, DecodedRow& out) {
  for (int64_t i = 0; i < n / kQK; ++i) {
    int8_t* q = out.q.data() + i * kQK;
    int16_t* sc = out.sc.data() + i * (kQK / 16);
    int16_t* mn = out.mn.data() + i * (kQK / 16);
    switch (type) {
      case TensorType::Q2_K: {
        const auto b = load<tensor::BlockQ2_K>(row, i);
        decode_q2_k(b, q, sc, mn);
        out.d[i] = f16_to_f32(b.d);
        out.dmin[i] = f16_to_f32(b.dmin);
        break;
      }
      case TensorType::Q3_K: {
        const auto b = load<tensor::BlockQ3_K>(row, i);
        decode_q3_k(b, q, sc);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::Q4_K: {
        const auto b = load<tensor::BlockQ4_K>(row, i);
        decode_q45_k(b, nullptr, q, sc, mn);
        out.d[i] = f16_to_f32(b.d);
        out.dmin[i] = f16_to_f32(b.dmin);
        break;
      }
      case TensorType::Q5_K: {
        const auto b = load<tensor::BlockQ5_K>(row, i);
        decode_q45_k(b, b.qh, q, sc, mn);
        out.d[i] = f16_to_f32(b.d);
        out.dmin[i] = f16_to_f32(b.dmin);
        break;
      }
      case TensorType::Q6_K: {
        const auto b = load<tensor::BlockQ6_K>(row, i);
        decode_q6_k(b, q, sc);
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      case TensorType::IQ4_XS: {
        const auto b = load<tensor::BlockIQ4_XS>(row, i);
        for (int j = 0; j < kQK / kB; ++j) {
          table_levels(b.qs + j * kB / 2, tensor::kIQ4Levels, q + j * kB);
          const int ls = ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | ((b.scales_h >> (2 * j)) & 3) << 4;
          sc[2 * j] = sc[2 * j + 1] = static_cast<int16_t>(ls - 32);
        }
        out.d[i] = f16_to_f32(b.d);
        break;
      }
      default: break;
    }
  }
}

// The types of 256-element super-blocks with per-group scales (IQ4_XS among them: it is
// computed as a K-quant without mins).
bool is_k_quant(TensorType type) {
  return type == TensorType::Q2_K || type == TensorType::Q3_K || type == TensorType::Q4_K ||
         type == TensorType::Q5_K || type == TensorType::Q6_K || type == TensorType::IQ4_XS;
}

}  // namespace

bool decodes_to_levels(TensorType type) {
  switch (type) {
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q8_0:
    case TensorType::IQ4_NL:
    case TensorType::MXFP4: return true;
    default: return is_k_quant(type);
  }
}

void DecodedRow::reserve(int64_t n) {
  if (static_cast<int64_t>(q.size()) >= n) return;
  q.resize(n);
  d.resize(n / kB + 1);
  dmin.resize(n / kB + 1);
  sc.resize(n / 16 + 1);
  mn.resize(n / 16 + 1);
  raw.resize(n * sizeof(float));  // the largest row an interleaved matrix unpacks: F32
}

void decode_row(TensorType type, const uint8_t* row, int64_t n, DecodedRow& out) {
  if (!decodes_to_levels(type))
    throw std::invalid_argument("decode_row: " + std::string(gguf::type_name(type)) + " has no levels");
  if (is_k_quant(type))
    decode_k(type, row, n, out);
  else
    decode_legacy(type, row, n, out);
}

float combine(TensorType type, const DecodedRow& w, const int32_t* groups, const Q8Row& a, int64_t n) {
  if (is_k_quant(type)) {
    const bool has_mins = type == TensorType::Q2_K || type == TensorType::Q4_K || type == TensorType::Q5_K;
    float sum = 0.0f, sum_mins = 0.0f;
    for (int64_t b = 0; b < n / kQK; ++b) {
      int32_t sumi = 0, summ = 0;
      for (int g = 0; g < kQK / 16; ++g) {
        const int64_t k = b * (kQK / 16) + g;
        sumi += w.sc[k] * groups[k];
        if (has_mins) summ += w.mn[k] * a.bsums[k];
      }
      sum += (a.d[b] * w.d[b]) * static_cast<float>(sumi);
      if (has_mins) sum_mins += (a.d[b] * w.dmin[b]) * static_cast<float>(summ);
    }
    return sum - sum_mins;
  }
  const bool has_min = type == TensorType::Q4_1 || type == TensorType::Q5_1;
  float sum = 0.0f, sum_mins = 0.0f;
  for (int64_t b = 0; b < n / kB; ++b) {
    sum += (w.d[b] * a.d[b]) * static_cast<float>(groups[2 * b] + groups[2 * b + 1]);
    if (has_min) sum_mins += w.dmin[b] * a.s[b];
  }
  return sum + sum_mins;
}

}  // namespace nanoserve::kernels
