// Float weights (F32, F16, BF16) interleaved by 8 rows (tensor/interleave.h) against float
// activation rows, for every Highway target (Highway's -inl pattern: included inside a
// per-target namespace of matmul_simd.cpp).
//
// A panel is W = 16 weight rows (a pair of groups) or 8 (a group alone): element k of its rows
// lies side by side at base + k × stride, so one vector of them times one activation value
// (broadcast) advances W outputs at once, and the results come out as vectors of outputs, with
// no sums across lanes. Each output is defined as two chains of fused multiply-adds, one over
// the even elements and one over the odd ones, in order, added at the end: two chains so that
// a single panel (decode reads one stream) has two in flight. That definition does not depend
// on the tile an output is computed in (how many activation rows or panels go together, the
// threads' ranges): a row gives the same bits alone (decode) or in a batch (prefill, a verify
// step), on a given target. Results equal the reference (double sums) up to float rounding.
#if defined(NANOSERVE_KERNELS_FLOAT_PANELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_FLOAT_PANELS_INL_H_
#undef NANOSERVE_KERNELS_FLOAT_PANELS_INL_H_
#else
#define NANOSERVE_KERNELS_FLOAT_PANELS_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>
#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#endif

#include "kernels/activations.h"
#include "kernels/float_dot-inl.h"
#include "kernels/prefetch-inl.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace fp {
namespace hn = hwy::HWY_NAMESPACE;

// Accumulator registers a tile may take: 24 of 32 vector registers (AVX-512, NEON, SVE), 12 of
// 16 (AVX2, SSE4), leaving room for the panel vectors and the broadcast activation.
constexpr int kAccumulators = !HWY_ARCH_X86 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL ? 24 : 12;

// W outputs' vectors: V of N lanes.
template <size_t W>
struct PanelShape {
  using D = hn::CappedTag<float, W>;
  static constexpr int N = static_cast<int>(hn::MaxLanes(D()));
  static constexpr int V = static_cast<int>(W) / N;
  // Panels a tile takes side by side when there are many activation rows (each panel is a
  // stream of weights): three where one vector holds a panel, else one.
  static constexpr int kPanels = V == 1 ? 3 : 1;
  // Activation rows of the largest tile: two chains × panels × V × rows accumulators.
  static constexpr int kRows = std::max(1, kAccumulators / (2 * kPanels * V));
};

// Element k of NP panels times activation rows 0..MR-1's element k, into one chain's
// accumulators.
template <class T, class D, int V, int MR, int NP>
HWY_INLINE void AddElement(D d, hn::Vec<D> (&acc)[NP][V][MR], const uint8_t* const* base, uint64_t stride, int64_t k,
                           FloatRows a) {
  constexpr int N = static_cast<int>(hn::MaxLanes(D()));
  hn::Vec<D> w[NP][V];
  for (int p = 0; p < NP; ++p) {
    const T* e = reinterpret_cast<const T*>(base[p] + static_cast<uint64_t>(k) * stride);
    for (int v = 0; v < V; ++v) w[p][v] = fd::LoadWide(d, e + v * N);
  }
  for (int r = 0; r < MR; ++r) {
    const hn::Vec<D> x = hn::Set(d, a.row(r)[k]);
    for (int p = 0; p < NP; ++p)
      for (int v = 0; v < V; ++v) acc[p][v][r] = hn::MulAdd(w[p][v], x, acc[p][v][r]);
  }
}

// out[r * NP * W + p * W + i] = output i of panel p for activation row r, for r < MR, p < NP.
// base[p]: panel p's element 0; stride: bytes from one element to the next. `prefetch`: ask
// for each panel's lines ahead (several streams at once), up to `end` (PrefetchLimit).
template <class T, size_t W, int MR, int NP>
HWY_NOINLINE void PanelTile(const uint8_t* const* base, uint64_t stride, int64_t n, FloatRows a, bool prefetch,
                            const uint8_t* end, float* out) {
  using Shape = PanelShape<W>;
  using D = typename Shape::D;
  constexpr int N = Shape::N, V = Shape::V;
  const D d;
  hn::Vec<D> even[NP][V][MR], odd[NP][V][MR];  // the two chains
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < V; ++v)
      for (int r = 0; r < MR; ++r) even[p][v][r] = odd[p][v][r] = hn::Zero(d);
  int64_t k = 0;
  for (; k + 2 <= n; k += 2) {
    if (prefetch) {
      for (int p = 0; p < NP; ++p) {
        const uint8_t* at = base[p] + static_cast<uint64_t>(k) * stride;
        PrefetchAhead<64, Ahead::kL2>(at, end);
        if (2 * stride > 64) PrefetchAhead<64, Ahead::kL2>(at + 64, end);
      }
    }
    AddElement<T>(d, even, base, stride, k, a);
    AddElement<T>(d, odd, base, stride, k + 1, a);
  }
  if (k < n) AddElement<T>(d, even, base, stride, k, a);
  for (int r = 0; r < MR; ++r)
    for (int p = 0; p < NP; ++p)
      for (int v = 0; v < V; ++v)
        hn::StoreU(hn::Add(even[p][v][r], odd[p][v][r]), d, out + r * NP * W + p * W + v * N);
}

// mr (1..kRows) activation rows against NP panels: the tile of mr rows (MR counts up to it, so
// that each tile's accumulators stay in registers).
template <class T, size_t W, int NP, int MR = 1>
void PanelRows(int mr, const uint8_t* const* base, uint64_t stride, int64_t n, FloatRows a, bool prefetch,
               const uint8_t* end, float* out) {
  if constexpr (MR < PanelShape<W>::kRows) {
    if (mr > MR) return PanelRows<T, W, NP, MR + 1>(mr, base, stride, n, a, prefetch, end, out);
  }
  PanelTile<T, W, MR, NP>(base, stride, n, a, prefetch, end, out);
}

// np (1..kPanels) panels side by side, mr activation rows.
template <class T, size_t W, int NP = 1>
void PanelsRows(int np, int mr, const uint8_t* const* base, uint64_t stride, int64_t n, FloatRows a, bool prefetch,
                const uint8_t* end, float* out) {
  if constexpr (NP < PanelShape<W>::kPanels) {
    if (np > NP) return PanelsRows<T, W, NP + 1>(np, mr, base, stride, n, a, prefetch, end, out);
  }
  PanelRows<T, W, NP>(mr, base, stride, n, a, prefetch, end, out);
}

#if HWY_TARGET == HWY_AVX3_DL
// ---- BF16 pairs (AVX-512 BF16) -------------------------------------------------------------
// A pair panel of BF16 weights against BF16 activations, two products a lane per instruction:
// vdpbf16ps adds w_k·a_k and w_k+1·a_k+1 into each float lane (products of BF16s are exact in
// float, so it is two rounded adds). Elements k and k + 1 of the panel's 16 rows lie in one
// 64-byte line; one word permutation gives each lane its row's two. Each output is one chain
// as two chains, over the even and the odd pairs in order (an odd last element by a multiply-add
// into the first), added at the end, whatever the tile: a row gives the same bits alone or in a
// batch, and decode's one row has two chains in flight. The instruction is written out (Highway 1.0.3 has no such
// op); it needs no target flag, and the caller checks that the CPU has it (bf16_pair_dots()).
struct Bf16Rows {
  const uint16_t* data;
  int64_t stride;
  const uint16_t* row(int64_t r) const { return data + r * stride; }
};

// A tile: one pair panel, two chains × 8 activation rows of one accumulator each: each permuted
// weight vector serves 8 products (the permutation, not the products, bounds fewer rows).
constexpr int kPairDotRows = 8;

HWY_INLINE __m512 DotPairs(__m512 acc, __m512i w, __m512i a) {
  asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(w), "v"(a));
  return acc;
}

// The 64 bytes at p (elements k and k + 1 of 16 rows) as 16 lanes of (row's k, row's k + 1).
HWY_INLINE __m512i RowPairs(const uint8_t* p) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                           8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  return _mm512_permutexvar_epi16(_mm512_load_si512(kInterleave), _mm512_loadu_si512(p));
}

// Elements k and k + 1 of the panel at `base` times activation rows 0..MR-1's, into one chain.
template <int MR>
HWY_INLINE void AddPair(__m512 (&acc)[MR], const uint8_t* base, uint64_t stride, int64_t k, Bf16Rows a,
                        bool prefetch, const uint8_t* end) {
  const uint8_t* at = base + static_cast<uint64_t>(k) * stride;
  if (prefetch) PrefetchAhead<64, Ahead::kL2>(at, end);
  const __m512i w = RowPairs(at);
  for (int r = 0; r < MR; ++r) {
    uint32_t pair;
    std::memcpy(&pair, a.row(r) + k, sizeof pair);
    acc[r] = DotPairs(acc[r], w, _mm512_set1_epi32(static_cast<int>(pair)));
  }
}

// out[r * 16 + i] = output i of the pair panel at `base` for activation row r < MR. stride (32:
// 16 rows of 2 bytes), prefetch, end: as PanelTile's.
template <int MR>
HWY_NOINLINE void PairDotTile(const uint8_t* base, uint64_t stride, int64_t n, Bf16Rows a, bool prefetch,
                              const uint8_t* end, float* out) {
  __m512 acc[2][MR];  // the chains of the even and the odd pairs
  for (auto& chain : acc)
    for (auto& v : chain) v = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    AddPair<MR>(acc[0], base, stride, k, a, prefetch, end);
    AddPair<MR>(acc[1], base, stride, k + 2, a, prefetch, end);
  }
  if (k + 2 <= n) {
    AddPair<MR>(acc[0], base, stride, k, a, prefetch, end);
    k += 2;
  }
  if (k < n) {  // the last element alone: BF16 to float is a shift
    const auto* at = reinterpret_cast<const __m256i*>(base + static_cast<uint64_t>(k) * stride);
    const __m512 w = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(at)), 16));
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(uint32_t{a.row(r)[k]} << 16)));
      acc[0][r] = _mm512_fmadd_ps(w, x, acc[0][r]);
    }
  }
  for (int r = 0; r < MR; ++r) _mm512_storeu_ps(out + r * 16, _mm512_add_ps(acc[0][r], acc[1][r]));
}

// mr (1..kPairDotRows) activation rows against one pair panel.
template <int MR = 1>
void PairDotRows(int mr, const uint8_t* base, uint64_t stride, int64_t n, Bf16Rows a, bool prefetch,
                 const uint8_t* end, float* out) {
  if constexpr (MR < kPairDotRows) {
    if (mr > MR) return PairDotRows<MR + 1>(mr, base, stride, n, a, prefetch, end, out);
  }
  PairDotTile<MR>(base, stride, n, a, prefetch, end, out);
}
#endif  // HWY_TARGET == HWY_AVX3_DL

}  // namespace fp
}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
