// Dot products of float weight rows (F32, F16 or BF16, widened to float in registers) with
// float activation rows, where the rows are not interleaved (the targets where interleaving does
// not pay, matrices of rows not in whole groups of 8; the interleaved ones: float_panels-inl.h),
// for every Highway target (Highway's -inl pattern: included inside a per-target namespace of
// matmul_simd.cpp).
//
// A tile of NW weight rows × NR activation rows is computed together: each weight vector is
// widened once and multiplied into every activation row of the tile, each activation vector
// is loaded once and used for every weight row. The rows are walked one 64-byte line of
// weights at a time, each asking for the line that far ahead of it (PrefetchAhead; the rows of
// a matrix are contiguous, so together they ask for every line ahead once). Results equal the
// reference (double sums) up to float rounding.
#if defined(NANOSERVE_KERNELS_FLOAT_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_FLOAT_DOT_INL_H_
#undef NANOSERVE_KERNELS_FLOAT_DOT_INL_H_
#else
#define NANOSERVE_KERNELS_FLOAT_DOT_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/activations.h"
#include "kernels/lane_sums-inl.h"
#include "kernels/prefetch-inl.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace fd {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Lanes(d) weights from p, as floats (T = float, hwy::float16_t or hwy::bfloat16_t).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadWide(D d, const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return hn::LoadU(d, p);
  } else {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<T, D>(), p));
  }
}

template <class T>
HWY_INLINE float ScalarWide(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return *p;
  } else {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return std::is_same_v<T, hwy::float16_t> ? tensor::f16_to_f32(bits) : tensor::bf16_to_f32(bits);
  }
}

// out[i * NR + r] = dot(weight row i, activation row r) for i < NW, r < NR.
template <class T, int NW, int NR>
HWY_NOINLINE void FloatTile(const uint8_t* w0, uint64_t row_bytes, const uint8_t* end, int64_t n, FloatRows a,
                            float* out) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr int64_t kLine = 64 / sizeof(T);  // weights per 64-byte line
  const T* w[NW];
  for (int i = 0; i < NW; ++i) w[i] = reinterpret_cast<const T*>(w0 + i * row_bytes);
  VF acc[NW][NR];
  for (int i = 0; i < NW; ++i)
    for (int r = 0; r < NR; ++r) acc[i][r] = hn::Zero(df);
  int64_t k = 0;
  for (; k + kLine <= n; k += kLine) {
    for (int i = 0; i < NW; ++i) PrefetchAhead<64, Ahead::kL2>(reinterpret_cast<const uint8_t*>(w[i] + k), end);
    for (int64_t v = k; v < k + kLine; v += N) {
      VF wv[NW];
      for (int i = 0; i < NW; ++i) wv[i] = LoadWide(df, w[i] + v);
      for (int r = 0; r < NR; ++r) {
        const VF av = hn::LoadU(df, a.row(r) + v);
        for (int i = 0; i < NW; ++i) acc[i][r] = hn::MulAdd(wv[i], av, acc[i][r]);
      }
    }
  }
  // Lane sums four at a time, in the order of `out`, all in LaneSums4's order: a result does
  // not depend on the tile it was computed in (threads' ranges, a batch's other rows).
  const VF* sums = &acc[0][0];
#if HWY_TARGET == HWY_SCALAR
  for (int j = 0; j < NW * NR; ++j) out[j] = hn::GetLane(sums[j]);
#else
  for (int j = 0; j < NW * NR; j += 4) {
    const auto get = [&](int m) { return j + m < NW * NR ? sums[j + m] : hn::Zero(df); };
    alignas(16) float four[4];
    hn::Store(LaneSums4(df, get(0), get(1), get(2), get(3)), hn::Full128<float>(), four);
    for (int m = 0; m < 4 && j + m < NW * NR; ++m) out[j + m] = four[m];
  }
#endif
  for (; k < n; ++k)  // the rest of a row that does not fill a line
    for (int i = 0; i < NW; ++i)
      for (int r = 0; r < NR; ++r) out[i * NR + r] += ScalarWide(w[i] + k) * a.row(r)[k];
}

}  // namespace fd

// Weight rows per tile (decode takes one at a time, FloatRange): each widened weight vector
// serves several activation rows.
constexpr int kFloatTileRows = 4;
// Activation rows per tile: 4 × 6 accumulators where there are 32 vector registers (AVX-512,
// NEON; 6 rather than 4 by measurement, experiments/kernel-notes.md), 4 × 2 in the 16 of the
// other x86 targets (AVX2, SSE4).
constexpr int kFloatTileActs = !HWY_ARCH_X86 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL ? 6 : 2;
// Outputs of the largest tile.
constexpr int kFloatTileOutputs = kFloatTileRows * kFloatTileActs;

template <class T, int NR>
HWY_INLINE void FloatTileActs(int nw, const uint8_t* w0, uint64_t row_bytes, const uint8_t* end, int64_t n,
                              FloatRows a, float* out) {
  if (nw == kFloatTileRows) return fd::FloatTile<T, kFloatTileRows, NR>(w0, row_bytes, end, n, a, out);
  for (int i = 0; i < nw; ++i) fd::FloatTile<T, 1, NR>(w0 + i * row_bytes, row_bytes, end, n, a, out + i * NR);
}

// out[i * nr + r] = dot(weight row i, activation row r) for i < nw and r < nr: nr at most
// kFloatTileActs, nw at most kFloatTileRows.
// T: the weights' type. end: where prefetches stop (PrefetchLimit).
template <class T>
void FloatDot(int nw, const uint8_t* w0, uint64_t row_bytes, const uint8_t* end, int64_t n, FloatRows a, int nr,
              float* out) {
  switch (kFloatTileActs == 2 ? std::min(nr, 2) : nr) {
    case 1: return FloatTileActs<T, 1>(nw, w0, row_bytes, end, n, a, out);
    case 2: return FloatTileActs<T, 2>(nw, w0, row_bytes, end, n, a, out);
    case 3: return FloatTileActs<T, 3>(nw, w0, row_bytes, end, n, a, out);
    case 4: return FloatTileActs<T, 4>(nw, w0, row_bytes, end, n, a, out);
    case 5: return FloatTileActs<T, 5>(nw, w0, row_bytes, end, n, a, out);
    default: return FloatTileActs<T, kFloatTileActs>(nw, w0, row_bytes, end, n, a, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
