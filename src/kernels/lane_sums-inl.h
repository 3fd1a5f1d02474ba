// LaneSums4: the lane sums of four vectors as the four lanes of one 128-bit vector, for the
// SIMD kernels (Highway's -inl pattern: included inside a per-target namespace). Adding
// interleaved pairs, then interleaved pairs of pairs, sums the lanes of one source in each
// 128-bit block; the blocks are then added half by half. Cheaper than four SumOfLanes, and
// each result depends on its own source only, in a fixed order, so a float sum does not
// change with the vectors it is reduced beside.
#if defined(NANOSERVE_KERNELS_LANE_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_LANE_SUMS_INL_H_
#undef NANOSERVE_KERNELS_LANE_SUMS_INL_H_
#else
#define NANOSERVE_KERNELS_LANE_SUMS_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR
// D: float or int32 lanes, 128 to 512 bits.
template <class D>
hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::Full128<hwy::HWY_NAMESPACE::TFromD<D>>> LaneSums4(
    D d, hwy::HWY_NAMESPACE::Vec<D> a0, hwy::HWY_NAMESPACE::Vec<D> a1, hwy::HWY_NAMESPACE::Vec<D> a2,
    hwy::HWY_NAMESPACE::Vec<D> a3) {
  namespace hn = hwy::HWY_NAMESPACE;
  using T = hn::TFromD<D>;
  const hn::Repartition<uint64_t, D> d64;
  const auto t01 = hn::Add(hn::InterleaveLower(d, a0, a1), hn::InterleaveUpper(d, a0, a1));
  const auto t23 = hn::Add(hn::InterleaveLower(d, a2, a3), hn::InterleaveUpper(d, a2, a3));
  const auto lo = hn::InterleaveLower(d64, hn::BitCast(d64, t01), hn::BitCast(d64, t23));
  const auto hi = hn::InterleaveUpper(d64, hn::BitCast(d64, t01), hn::BitCast(d64, t23));
  const auto sums = hn::Add(hn::BitCast(d, lo), hn::BitCast(d, hi));
  const hn::Full128<T> d128;
  if constexpr (hn::MaxLanes(d) * sizeof(T) == 16) {
    return sums;
  } else if constexpr (hn::MaxLanes(d) * sizeof(T) == 32) {
    return hn::Add(hn::LowerHalf(d128, sums), hn::UpperHalf(d128, sums));
  } else {
    const hn::Half<D> d256;
    const auto half = hn::Add(hn::LowerHalf(d256, sums), hn::UpperHalf(d256, sums));
    return hn::Add(hn::LowerHalf(d128, half), hn::UpperHalf(d128, half));
  }
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
