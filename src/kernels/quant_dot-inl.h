// Fused dot products of quantized weight rows with Q8 activation rows, read straight from the
// weight blocks (no level buffer), for the x86 targets with 256-bit vectors (AVX2, AVX-512,
// AVX-512 VNNI): the entry points matmul_simd.cpp calls, and which kernel serves which case.
//   quant_dot_common-inl.h       vector types, the byte dot product, fp16, level unpacking
//   quant_dot_block32-inl.h      tiles of Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, MXFP4 rows as stored
//   quant_dot_kquant-inl.h       tiles of Q4_K, Q5_K, Q6_K, IQ4_XS rows as the file stores them
//   quant_dot_lanes-inl.h        the lanes of rows interleaved by 8 (tensor/interleave.h)
//   quant_dot_interleaved-inl.h  interleaved rows of those types (AVX-512 VNNI)
//   quant_dot_pairs-inl.h        interleaved rows of those types (AVX2, AVX-512)
//
// A tile of weight rows × activation rows is computed together, so each weight block is
// unpacked once per tile and each activation block loaded once per tile, the accumulators in
// registers. Each block's integer dot product (unsigned × signed bytes, four at a time into int32
// lanes) is exact before its one float multiply-add, so results equal the reference up to float
// summation order (the K-quants' bit for bit): the block32 and kquant headers say how.
//
// Included inside the per-target namespace of matmul_simd.cpp (Highway's -inl pattern).
#if defined(NANOSERVE_KERNELS_QUANT_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#undef NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#else
#define NANOSERVE_KERNELS_QUANT_DOT_INL_H_
#endif

#include <algorithm>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/quant_dot_block32-inl.h"
#include "kernels/quant_dot_common-inl.h"
#include "kernels/quant_dot_interleaved-inl.h"
#include "kernels/quant_dot_kquant-inl.h"
#include "kernels/quant_dot_pairs-inl.h"
#include "kernels/weight_rows.h"
#include "tensor/blocks.h"
#include "tensor/interleave.h"

HWY_BEFORE_NAMESPACE();
#if HWY_TARGET == HWY_AVX3_DL
#pragma GCC target("avx512vnni")  // as in quant_dot_common-inl.h
#endif
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

constexpr int kMaxTileRows = 4;
// Activation rows per interleaved tile: 10 where AVX-512's 32 registers hold 10 rows' two
// accumulators beside the group's 8 chunks (one pass over the weights serves a decode step of
// 8 sequences and a few draft rows), 4 on AVX2's 16 registers.
constexpr int kInterleavedTileRows = HWY_TARGET == HWY_AVX2 ? 4 : 10;
// The tile of the kernels that work in passes of 4 rows (the K-quants, and every type on AVX2).
constexpr int kTileRowsInPasses = HWY_TARGET == HWY_AVX2 ? 4 : 8;

// The K-quants among the fused types (and IQ4_XS, computed as one): their kernels keep integer
// sums per super-block as well.
inline bool IsFusedKQuant(TensorType type) {
  return type == TensorType::Q4_K || type == TensorType::Q5_K || type == TensorType::Q6_K ||
         type == TensorType::IQ4_XS;
}

// The activation rows of the InterleavedDot call that starts `done` rows into a chunk of
// `rows`. The 512-bit kernels for blocks of 32 take any count up to kInterleavedTileRows in
// one pass, so the chunk is cut into the fewest even tiles (9 rows as 5 + 4, not 8 + 1, whose
// last pass would carry one row at the cost of a pass's loads and float steps); the others
// work in passes of 4 (PairInPasses), so their tiles stay 8 rows (4 on AVX2) and the rest.
inline int InterleavedTile(TensorType type, int64_t rows, int64_t done) {
  if (HWY_TARGET != HWY_AVX3_DL || IsFusedKQuant(type))
    return static_cast<int>(std::min<int64_t>(kTileRowsInPasses, rows - done));
  const int64_t tiles = (rows + kInterleavedTileRows - 1) / kInterleavedTileRows, small = rows / tiles;
  return static_cast<int>(done < rows % tiles * (small + 1) ? small + 1 : small);
}

#if NANOSERVE_FUSED_QUANT_DOT
// One interleaved group, its block b at group + b * stride.
template <class Block>
void GroupDotOf(const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n, const Q8Row* a,
                const int32_t* minus_128_sums, int nr, float* out) {
  switch (nr) {
    case 1: return qd::InterleavedKernel<Block, 1, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 2: return qd::InterleavedKernel<Block, 2, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 3: return qd::InterleavedKernel<Block, 3, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 4: return qd::InterleavedKernel<Block, 4, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
#if HWY_TARGET != HWY_AVX2
    case 5: return qd::InterleavedKernel<Block, 5, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 6: return qd::InterleavedKernel<Block, 6, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 7: return qd::InterleavedKernel<Block, 7, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 8: return qd::InterleavedKernel<Block, 8, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
    case 9: return qd::InterleavedKernel<Block, 9, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
#endif
    default:
      return qd::InterleavedKernel<Block, kInterleavedTileRows, 1, 1>(group, stride, end, n, a, minus_128_sums, out);
  }
}

// A pair of groups, up to 4 activation rows a pass, read as two vectors of 8 lanes (H = 2) or
// as one of 16 (G = 2: the K-quants on AVX3_DL from 4 rows on, where at most 4 rows'
// accumulators fit the registers beside the levels).
// With H = 2, both groups in one pass are one stream whose lines are used as they arrive (one
// group after the other, the stride between its blocks breaks the hardware prefetchers). Passes
// of 4 rows are AVX2's tile: its registers then spill a few accumulators, which costs less than
// unpacking the levels again for shorter passes; later passes find the pair in cache.
// (Measured: experiments/kernel-notes.md.)
template <class Block, int H, int G>
void PairInPasses(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, const int32_t* minus_128_sums,
                  int nr, float* out) {
  constexpr int kPassRows = 4;
  const uint64_t stride = 2 * tensor::kInterleaveRows * sizeof(Block);
  for (int r0 = 0; r0 < nr; r0 += kPassRows) {
    const int32_t* sums = minus_128_sums ? minus_128_sums + r0 * (n / 32) : nullptr;
    float* o = out + tensor::kPairRows * r0;
    switch (std::min(kPassRows, nr - r0)) {
      case 1: qd::InterleavedKernel<Block, 1, H, G>(pair, stride, end, n, a + r0, sums, o); break;
      case 2: qd::InterleavedKernel<Block, 2, H, G>(pair, stride, end, n, a + r0, sums, o); break;
      case 3: qd::InterleavedKernel<Block, 3, H, G>(pair, stride, end, n, a + r0, sums, o); break;
      default: qd::InterleavedKernel<Block, kPassRows, H, G>(pair, stride, end, n, a + r0, sums, o); break;
    }
  }
}

#if HWY_TARGET == HWY_AVX3_DL
// A pair of blocks of 32 as one group of 16 lanes, 4 to kInterleavedTileRows activation rows.
template <class Block>
void Block32PairDotOf(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a,
                      const int32_t* minus_128_sums, int nr, float* out) {
  const uint64_t stride = 2 * tensor::kInterleaveRows * sizeof(Block);
  switch (nr) {
    case 4: return qd::InterleavedKernel<Block, 4, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    case 5: return qd::InterleavedKernel<Block, 5, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    case 6: return qd::InterleavedKernel<Block, 6, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    case 7: return qd::InterleavedKernel<Block, 7, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    case 8: return qd::InterleavedKernel<Block, 8, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    case 9: return qd::InterleavedKernel<Block, 9, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
    default:
      return qd::InterleavedKernel<Block, kInterleavedTileRows, 1, 2>(pair, stride, end, n, a, minus_128_sums, out);
  }
}
#endif

// A pair of groups (tensor/interleave.h): out[r * 16 + j] for its rows j = 0..15. Where
// 512-bit byte dot products exist, both groups in each vector from 4 activation rows on; for
// fewer (decode) the 8-lane kernels, which read the stream faster (matmul_range.h).
template <class Block>
void PairDotOf(const uint8_t* pair, const uint8_t* end, int64_t n, const Q8Row* a, const int32_t* minus_128_sums,
               int nr, float* out) {
#if HWY_TARGET == HWY_AVX3_DL
  if (nr <= 3) return PairInPasses<Block, 2, 1>(pair, end, n, a, minus_128_sums, nr, out);
  if constexpr (std::is_same_v<Block, tensor::BlockQ4_K> || std::is_same_v<Block, tensor::BlockQ6_K> ||
                std::is_same_v<Block, tensor::BlockIQ4_XS>)
    return PairInPasses<Block, 1, 2>(pair, end, n, a, minus_128_sums, nr, out);
  else
    return Block32PairDotOf<Block>(pair, end, n, a, minus_128_sums, nr, out);
#else
  PairInPasses<Block, 2, 1>(pair, end, n, a, minus_128_sums, nr, out);
#endif
}

// out[r * 8 * (pair ? 2 : 1) + j] = dot(row j of the interleaved rows at `group`, activation
// row a[r]) for r < nr (1..kInterleavedTileRows): a pair of groups (16 rows), or one group,
// its block b at group + b * stride. type: one with an interleaved layout (tensor/interleave.h;
// the K-quants and IQ4_XS do not use minus_128_sums). end: where prefetches stop (PrefetchLimit).
template <class Block>
void InterleavedDotOf(bool pair, const uint8_t* group, uint64_t stride, const uint8_t* end, int64_t n,
                      const Q8Row* a, const int32_t* minus_128_sums, int nr, float* out) {
  if (pair) return PairDotOf<Block>(group, end, n, a, minus_128_sums, nr, out);
  GroupDotOf<Block>(group, stride, end, n, a, minus_128_sums, nr, out);
}

inline void InterleavedDot(TensorType type, bool pair, const uint8_t* group, uint64_t stride, const uint8_t* end,
                           int64_t n, const Q8Row* a, const int32_t* minus_128_sums, int nr, float* out) {
  switch (type) {
    case TensorType::Q8_0:
      return InterleavedDotOf<tensor::BlockQ8_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q5_0:
      return InterleavedDotOf<tensor::BlockQ5_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q4_K:
      return InterleavedDotOf<tensor::BlockQ4_K>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::Q6_K:
      return InterleavedDotOf<tensor::BlockQ6_K>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::IQ4_NL:
      return InterleavedDotOf<tensor::BlockIQ4_NL>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::MXFP4:
      return InterleavedDotOf<tensor::BlockMXFP4>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    case TensorType::IQ4_XS:
      return InterleavedDotOf<tensor::BlockIQ4_XS>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
    default: return InterleavedDotOf<tensor::BlockQ4_0>(pair, group, stride, end, n, a, minus_128_sums, nr, out);
  }
}

// Whether this target has a fused kernel for the weight type.
inline bool HasFusedDot(TensorType type) {
  return type == TensorType::Q8_0 || type == TensorType::Q4_0 || type == TensorType::Q5_0 ||
         type == TensorType::Q4_1 || type == TensorType::Q5_1 || type == TensorType::IQ4_NL ||
         type == TensorType::MXFP4 || IsFusedKQuant(type);
}

// Weight rows per tile: four for blocks of 32 where AVX-512's 32 registers hold a 4 × 4 tile,
// two for the K-quants (whose tiles also keep integer sums) and on AVX2's 16 registers.
inline int FusedTileRows(TensorType type) {
  return IsFusedKQuant(type) || HWY_TARGET == HWY_AVX2 ? 2 : 4;
}

template <int NW, int NR>
void FusedTile(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, const Q8Row* a,
               float* out) {
  switch (type) {
    case TensorType::Q8_0: return qd::DotBlock32<tensor::BlockQ8_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q4_0: return qd::DotBlock32<tensor::BlockQ4_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q5_0: return qd::DotBlock32<tensor::BlockQ5_0, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::IQ4_NL: return qd::DotBlock32<tensor::BlockIQ4_NL, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::MXFP4: return qd::DotBlock32<tensor::BlockMXFP4, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q4_1: return qd::DotBlock32Min<tensor::BlockQ4_1, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q5_1: return qd::DotBlock32Min<tensor::BlockQ5_1, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q4_K: return qd::DotQ45_K<tensor::BlockQ4_K, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q5_K: return qd::DotQ45_K<tensor::BlockQ5_K, NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::Q6_K: return qd::DotQ6_K<NW, NR>(w0, end, row_bytes, n, a, out);
    case TensorType::IQ4_XS: return qd::DotIQ4_XS<NW, NR>(w0, end, row_bytes, n, a, out);
    default: return;
  }
}

template <int NW>
void FusedTileRowsOf(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n,
                     const Q8Row* a, int nr, float* out) {
  switch (nr) {
    case 1: return FusedTile<NW, 1>(type, w0, end, row_bytes, n, a, out);
    case 2: return FusedTile<NW, 2>(type, w0, end, row_bytes, n, a, out);
    case 3: return FusedTile<NW, 3>(type, w0, end, row_bytes, n, a, out);
    default: return FusedTile<NW, kMaxTileRows>(type, w0, end, row_bytes, n, a, out);
  }
}

// out[i * nr + r] = dot(weight row i, activation row a[r]) for i < nw (1, 2 or 4) and
// r < nr (1..kMaxTileRows). end: where prefetches stop (PrefetchLimit).
inline void FusedDot(TensorType type, const uint8_t* w0, const uint8_t* end, uint64_t row_bytes, int64_t n, int nw,
                     const Q8Row* a, int nr, float* out) {
  switch (nw) {
    case 1: return FusedTileRowsOf<1>(type, w0, end, row_bytes, n, a, nr, out);
    case 2: return FusedTileRowsOf<2>(type, w0, end, row_bytes, n, a, nr, out);
    default: return FusedTileRowsOf<4>(type, w0, end, row_bytes, n, a, nr, out);
  }
}
#else
inline bool HasFusedDot(TensorType) { return false; }
inline void InterleavedDot(TensorType, bool, const uint8_t*, uint64_t, const uint8_t*, int64_t, const Q8Row*,
                           const int32_t*, int, float*) {}
inline int FusedTileRows(TensorType) { return 1; }
inline void FusedDot(TensorType, const uint8_t*, const uint8_t*, uint64_t, int64_t, int, const Q8Row*, int, float*) {}
#endif  // NANOSERVE_FUSED_QUANT_DOT

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
