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

#include <hwy/highway.h>

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

}  // namespace fp
}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
