// The SIMD body of matmul, compiled once per Highway target and dispatched at run time.
// It computes what matmul_range_reference computes: float rows with vector FMAs, quantized
// rows as exact integer group sums (so those results equal the reference bit for bit).
#include <cstddef>
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matmul_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/float_dot-inl.h"
#include "kernels/float_panels-inl.h"
#include "kernels/lane_sums-inl.h"
#include "kernels/matmul_range.h"
#include "kernels/quant_dot-inl.h"
#include "tensor/blocks.h"
#include "tensor/fp16.h"
#include "tensor/interleave.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// groups[g] = sum over i < 16 of w[16g + i] * a[16g + i], exactly, for n / 16 groups.
void GroupDots16(const int8_t* w, const int8_t* a, int64_t n, int32_t* groups) {
  const hn::CappedTag<int16_t, 16> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d16));
  for (int64_t g = 0; g < n / 16; ++g) {
    auto sum0 = hn::Zero(d32), sum1 = hn::Zero(d32);
    for (int64_t j = 16 * g; j < 16 * g + 16; j += N) {
      const auto wv = hn::PromoteTo(d16, hn::LoadU(d8, w + j));
      const auto av = hn::PromoteTo(d16, hn::LoadU(d8, a + j));
      sum0 = hn::ReorderWidenMulAccumulate(d32, wv, av, sum0, sum1);
    }
    groups[g] = hn::GetLane(hn::SumOfLanes(d32, hn::Add(sum0, sum1)));
  }
}

// Levels widened to int16 (at most 256 bits) and their pairwise products' sums in int32.
using D16 = hn::CappedTag<int16_t, 16>;
using D32 = hn::Repartition<int32_t, D16>;

// The exact integer dot product of 32 int8 levels, spread over the lanes of a vector of int32.
hn::Vec<D32> LevelDot32(const int8_t* w, const int8_t* a) {
  const D16 d16;
  const D32 d32;
  const hn::Rebind<int8_t, D16> d8;
  const size_t N = hn::Lanes(d16);
  auto sum0 = hn::Zero(d32), sum1 = hn::Zero(d32);
  for (size_t j = 0; j < 32; j += N) {
    const auto wv = hn::PromoteTo(d16, hn::LoadU(d8, w + j));
    const auto av = hn::PromoteTo(d16, hn::LoadU(d8, a + j));
    sum0 = hn::ReorderWidenMulAccumulate(d32, wv, av, sum0, sum1);
  }
  return hn::Add(sum0, sum1);
}

// Q8_0 weights straight from their blocks (no level buffer): for each block b of the row,
// groups[2b] = the exact integer dot product of its 32 levels with the activation's, and
// groups[2b + 1] = 0, so combine() adds G[2b] + G[2b + 1] to the same sum as from 16-element
// group sums.
void BlockDotsQ8_0(const uint8_t* wrow, const int8_t* a, int64_t n, int32_t* groups) {
  constexpr int kB = tensor::kLegacyBlock;
  const auto levels = [wrow](int64_t b) {
    return reinterpret_cast<const int8_t*>(wrow + b * sizeof(tensor::BlockQ8_0) + offsetof(tensor::BlockQ8_0, qs));
  };
  const int64_t nb = n / kB;
  int64_t b = 0;
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  for (; b + 4 <= nb; b += 4) {
    const auto s0 = LevelDot32(levels(b), a + b * kB);
    const auto s1 = LevelDot32(levels(b + 1), a + (b + 1) * kB);
    const auto s2 = LevelDot32(levels(b + 2), a + (b + 2) * kB);
    const auto s3 = LevelDot32(levels(b + 3), a + (b + 3) * kB);
    alignas(16) int32_t sums[4];
    hn::Store(LaneSums4(D32(), s0, s1, s2, s3), hn::Full128<int32_t>(), sums);
    for (int k = 0; k < 4; ++k) {
      groups[2 * (b + k)] = sums[k];
      groups[2 * (b + k) + 1] = 0;
    }
  }
#endif
  for (; b < nb; ++b) {
    groups[2 * b] = hn::GetLane(hn::SumOfLanes(D32(), LevelDot32(levels(b), a + b * kB)));
    groups[2 * b + 1] = 0;
  }
}

// The block scales of a Q8_0 row, as decode_row() would store them.
void ScalesQ8_0(const uint8_t* wrow, int64_t n, DecodedRow& row) {
  for (int64_t b = 0; b < n / tensor::kLegacyBlock; ++b) {
    uint16_t d;
    std::memcpy(&d, wrow + b * sizeof(tensor::BlockQ8_0) + offsetof(tensor::BlockQ8_0, d), sizeof(d));
    row.d[b] = tensor::f16_to_f32(d);
  }
}

// Quantized weight rows [o0, o1) one at a time (rows of an interleaved matrix unpacked first).
void RowRange(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups) {
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const int64_t n = w.n_in;
  const ActType act = act_type_for(w.type);
  for (int64_t o = o0; o < o1; ++o) {
    const uint8_t* wrow = weight_row(w, o, row);
    const bool fused = w.type == TensorType::Q8_0;
    if (fused)
      ScalesQ8_0(wrow, n, row);
    else if (decodes_to_levels(w.type))
      decode_row(w.type, wrow, n, row);
    for (int64_t r = 0; r < acts.n_rows(); ++r) {
      const Q8Row a = q8_row(acts, act, r);
      if (fused)
        BlockDotsQ8_0(wrow, a.q, n, groups);
      else
        GroupDots16(row.q.data(), a.q, n, groups);
      const float result = combine(w.type, row, groups, a, n);
      task.out[r * task.out_stride + o] = result;
    }
  }
}

// Activation rows are taken in chunks small enough to stay in L2 while every weight tile of
// the range passes over them.
constexpr int64_t kChunkRows = 64;

// The Q8 views of every activation row, kept in the thread's scratch.
const Q8Row* ActRows(const Activations& acts, ActType type, FusedActs& fused) {
  fused.rows.resize(acts.n_rows());
  for (int64_t r = 0; r < acts.n_rows(); ++r) fused.rows[r] = q8_row(acts, type, r);
  return fused.rows.data();
}

void FusedRange(const MatmulTask& task, int64_t o0, int64_t o1, FusedActs& fused) {
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const int64_t n_rows = acts.n_rows();
  const Q8Row* rows = ActRows(acts, act_type_for(w.type), fused);
  const int tile_w = FusedTileRows(w.type);
  const uint8_t* end = PrefetchLimit(w.data + o1 * w.row_bytes, o1 == w.n_out);
  float tile[4 * kMaxTileRows] = {};
  for (int64_t c0 = 0; c0 < n_rows; c0 += kChunkRows) {
    const int64_t c1 = std::min(n_rows, c0 + kChunkRows);
    for (int64_t o = o0; o < o1;) {
      int nw = tile_w;
      while (o + nw > o1) nw /= 2;  // 4, 2 or 1 rows
      for (int64_t r0 = c0; r0 < c1; r0 += kMaxTileRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kMaxTileRows, c1 - r0));
        FusedDot(w.type, w.data + o * w.row_bytes, end, w.row_bytes, w.n_in, nw, rows + r0, nr, tile);
        for (int i = 0; i < nw; ++i)
          for (int r = 0; r < nr; ++r) task.out[(r0 + r) * task.out_stride + o + i] = tile[i * nr + r];
      }
      o += nw;
    }
  }
}

// An interleaved matrix (Q8_0, Q5_0, Q4_0, Q4_K, Q6_K): whole pairs of groups (16 rows) and
// whole groups of 8 with InterleavedDot, rows of a group the range cuts one at a time.
void InterleavedRange(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups,
                      FusedActs& fused) {
  constexpr int64_t G = tensor::kInterleaveRows, P = tensor::kPairRows;
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const int64_t n_rows = acts.n_rows(), n = w.n_in, nb = n / 32;
  const int64_t g0 = (o0 + G - 1) / G * G, g1 = std::max(g0, o1 / G * G);
  RowRange(task, o0, std::min(g0, o1), row, groups);
  if (g0 < g1) {
    const ActType act = act_type_for(w.type);
    const Q8Row* rows = ActRows(acts, act, fused);
    // Blocks of 32 take the offset of their unsigned levels off through these sums.
    const int32_t* sums = act == ActType::Q8_0 ? acts.q8_block32().minus_128_sums.data() : nullptr;
    float tile[P * kInterleavedTileRows] = {};  // zeroed: targets without the kernels never write it
    for (int64_t c0 = 0; c0 < n_rows; c0 += kChunkRows) {
      const int64_t c1 = std::min(n_rows, c0 + kChunkRows);
      const bool stream = c1 - c0 <= kStreamRows;
      const uint8_t* end = stream ? NoPrefetch(w.data) : PrefetchLimit(w.data + g1 * w.row_bytes, g1 == w.n_out);
      for (int64_t o = g0; o < g1;) {
        const bool pair = o % P == 0 && o + P <= g1;  // then it is one (g1 <= n_out)
        const tensor::GroupBlocks place = tensor::group_blocks(w.type, n, w.n_out, o);
        const int64_t width = pair ? P : G;
        for (int64_t r0 = c0; r0 < c1;) {
          const int nr = InterleavedTile(w.type, c1 - c0, r0 - c0);
          InterleavedDot(w.type, pair, w.data + place.offset, place.stride, end, n, rows + r0,
                         sums ? sums + r0 * nb : nullptr, nr, tile);
          const hn::CappedTag<float, G> dg;  // one group's outputs per vector at most
          for (int r = 0; r < nr; ++r)
            for (int64_t j = 0; j < width; j += G)
              hn::StoreU(hn::LoadU(dg, tile + width * r + j), dg, task.out + (r0 + r) * task.out_stride + o + j);
          r0 += nr;
        }
        o += width;
      }
    }
  }
  RowRange(task, std::max(g1, o0), o1, row, groups);
}

// F32, F16 or BF16 weight rows [o0, o1), in tiles of weight rows × activation rows
// (float_dot-inl.h): eight weight rows a tile for one activation row, four for more.
template <class T>
void FloatRange(const MatmulTask& task, int64_t o0, int64_t o1) {
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const FloatRows rows = acts.float_rows(act_type_for(w.type));
  const int64_t n_rows = acts.n_rows();
  float tile[kFloatTileOutputs];
  for (int64_t c0 = 0; c0 < n_rows; c0 += kChunkRows) {
    const int64_t c1 = std::min(n_rows, c0 + kChunkRows);
    // One activation row (decode) reads the weights as one stream, as InterleavedRange does:
    // a row at a time, no prefetch. With more rows, tiles: a row at a time would load each
    // row's float activations (twice an F16 line's bytes) per line of weights.
    const bool stream = c1 - c0 == 1;
    const uint8_t* end = stream ? NoPrefetch(w.data) : PrefetchLimit(w.data + o1 * w.row_bytes, o1 == w.n_out);
    const int64_t width = stream ? 1 : kFloatTileRows;
    for (int64_t o = o0; o < o1; o += width) {
      const int nw = static_cast<int>(std::min(width, o1 - o));
      for (int64_t r0 = c0; r0 < c1; r0 += kFloatTileActs) {
        const int nr = static_cast<int>(std::min<int64_t>(kFloatTileActs, c1 - r0));
        FloatDot<T>(nw, w.data + o * w.row_bytes, w.row_bytes, end, w.n_in, {rows.row(r0), rows.stride}, nr, tile);
        for (int i = 0; i < nw; ++i)
          for (int r = 0; r < nr; ++r) task.out[(r0 + r) * task.out_stride + o + i] = tile[i * nr + r];
      }
    }
  }
}

#if HWY_TARGET == HWY_AVX3_DL
// Activation rows [c0, c1) against the pair panel of an interleaved BF16 matrix at row o (a whole
// pair's first), in BF16 pairs (float_panels-inl.h); writes the outputs in [o0, o1). (A last
// group alone takes the float path.)
void BF16PairPanel(const MatmulTask& task, int64_t o, int64_t o0, int64_t o1, int64_t c0, int64_t c1, bool stream,
                   const uint8_t* end) {
  constexpr int64_t P = tensor::kPairRows;
  const Matrix& w = *task.w;
  const tensor::GroupBlocks panel = tensor::group_blocks(w.type, w.n_in, w.n_out, o);
  float tile[fp::kPairDotRows * P];
  const int64_t lo = std::max(o, o0), hi = std::min(o + P, o1);
  for (int64_t r0 = c0; r0 < c1;) {
    const int mr = static_cast<int>(std::min<int64_t>(fp::kPairDotRows, c1 - r0));
    fp::PairDotRows(mr, w.data + panel.offset, panel.stride, w.n_in, {task.acts->bf16_bits(r0), task.acts->n_cols()},
                    !stream, end, tile);
    for (int r = 0; r < mr; ++r)
      std::copy(tile + r * P + (lo - o), tile + r * P + (hi - o), task.out + (r0 + r) * task.out_stride + lo);
    r0 += mr;
  }
}
#endif

// The panels of an interleaved float matrix (float_panels-inl.h) that hold rows [o0, o1): whole
// pairs (16 rows), side by side in tiles of several where there are many activation rows, and
// groups of 8 (a pair's group the range starts or ends in, a last group alone). A group the
// range cuts is computed whole and only the range's rows are written: an output's bits do not
// depend on the tile it was computed in.
template <class T>
void FloatPanelRange(const MatmulTask& task, int64_t o0, int64_t o1) {
  constexpr int64_t G = tensor::kInterleaveRows, P = tensor::kPairRows;
  using Pair = fp::PanelShape<P>;
  using Group = fp::PanelShape<G>;
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const FloatRows rows = acts.float_rows(act_type_for(w.type));
  const int64_t n_rows = acts.n_rows(), n = w.n_in;
  const int64_t first = o0 / G * G, last = std::min(w.n_out, (o1 + G - 1) / G * G);
  // Decode reads one panel at a time: one stream of weights, which the hardware prefetchers
  // follow (matmul_range.h); with more rows, tiles of several panels with software prefetch.
  const bool stream = n_rows <= kStreamRows;
  const uint8_t* end = stream ? NoPrefetch(w.data) : PrefetchLimit(w.data + last * w.row_bytes, last == w.n_out);
  constexpr int kTile = std::max(Pair::kRows * Pair::kPanels * static_cast<int>(P), Group::kRows * static_cast<int>(G));
  float tile[kTile];
  for (int64_t c0 = 0; c0 < n_rows; c0 += kChunkRows) {
    const int64_t c1 = std::min(n_rows, c0 + kChunkRows);
    for (int64_t o = first; o < last;) {
      const bool pair = o % P == 0 && o + P <= last;  // then it is one (last <= n_out)
      const int64_t width = pair ? P : G;
      const int np = stream || !pair ? 1 : static_cast<int>(std::min<int64_t>(Pair::kPanels, (last - o) / P));
      const uint64_t stride = tensor::group_blocks(w.type, n, w.n_out, o).stride;
      const uint8_t* base[Pair::kPanels];
      for (int j = 0; j < np; ++j) base[j] = w.data + tensor::group_blocks(w.type, n, w.n_out, o + j * width).offset;
#if HWY_TARGET == HWY_AVX3_DL
      if constexpr (std::is_same_v<T, hwy::bfloat16_t>) {
        // A whole pair is always computed in pairs, also where the range holds one of its groups.
        const int64_t pair_start = o / P * P;
        if (bf16_pair_dots() && pair_start + P <= w.n_out) {
          BF16PairPanel(task, pair_start, o0, o1, c0, c1, stream, end);
          o = pair_start + P;
          continue;
        }
      }
#endif
      const int max_rows = pair ? Pair::kRows : Group::kRows;
      for (int64_t r0 = c0; r0 < c1;) {
        const int mr = static_cast<int>(std::min<int64_t>(max_rows, c1 - r0));
        const FloatRows a = {rows.row(r0), rows.stride};
        if (pair)
          fp::PanelsRows<T, P>(np, mr, base, stride, n, a, !stream, end, tile);
        else
          fp::PanelRows<T, G, 1>(mr, base, stride, n, a, !stream, end, tile);
        const int64_t outputs = np * width;
        const int64_t lo = std::max(o, o0), hi = std::min(o + outputs, o1);
        for (int r = 0; r < mr; ++r)
          std::copy(tile + r * outputs + (lo - o), tile + r * outputs + (hi - o),
                    task.out + (r0 + r) * task.out_stride + lo);
        r0 += mr;
      }
      o += np * width;
    }
  }
}

void MatmulRange(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups,
                 FusedActs& fused) {
  const Matrix& w = *task.w;
  switch (w.type) {
    case TensorType::F32:
      return w.interleaved ? FloatPanelRange<float>(task, o0, o1) : FloatRange<float>(task, o0, o1);
    case TensorType::F16:
      return w.interleaved ? FloatPanelRange<hwy::float16_t>(task, o0, o1) : FloatRange<hwy::float16_t>(task, o0, o1);
    case TensorType::BF16:
      return w.interleaved ? FloatPanelRange<hwy::bfloat16_t>(task, o0, o1) : FloatRange<hwy::bfloat16_t>(task, o0, o1);
    default: break;
  }
  if (!HasFusedDot(w.type)) return RowRange(task, o0, o1, row, groups);
  if (w.interleaved) return InterleavedRange(task, o0, o1, row, groups, fused);
  FusedRange(task, o0, o1, fused);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(MatmulRange);
HWY_EXPORT(HasFusedDot);

bool interleaving_pays() { return HWY_DYNAMIC_DISPATCH(HasFusedDot)(TensorType::Q8_0); }

void matmul_range_simd(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups,
                       FusedActs& fused) {
  HWY_DYNAMIC_DISPATCH(MatmulRange)(task, o0, o1, row, groups, fused);
}

}  // namespace nanoserve::kernels
#endif
