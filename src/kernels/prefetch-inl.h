// Software prefetch of the weight stream, for the matmul kernels of every Highway target
// (Highway's -inl pattern: included inside a per-target namespace).
//
// Weight rows are read once per step, straight from the mapped file: the hardware prefetcher
// stops at each 4 KiB page, so decode (one activation row, little arithmetic per byte) waits on
// memory unless the bytes are asked for well ahead. 16 KiB ahead of each row's stream was the
// best distance measured on the 2-core Zen 4 machine (0.5B Q8_0 decode 19 -> 31 tok/s).
#if defined(NANOSERVE_KERNELS_PREFETCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NANOSERVE_KERNELS_PREFETCH_INL_H_
#undef NANOSERVE_KERNELS_PREFETCH_INL_H_
#else
#define NANOSERVE_KERNELS_PREFETCH_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {

constexpr size_t kPrefetchAhead = 16 * 1024;

// Where the prefetches of a thread whose weight rows end at `rows_end` stop: there, unless its
// rows end the matrix. The rows after them are another thread's, and fetching those into this
// core's cache spends bandwidth that the other core spends again. Past the matrix's end lies,
// in a GGUF file written layer by layer, the next matrix of the forward pass, which the next
// call reads after the serial work between the two (norms, attention): fetching its start
// while that work runs costs nothing. (A prefetch past the end of a mapping does not fault.)
inline const uint8_t* PrefetchLimit(const uint8_t* rows_end, bool ends_matrix) {
  return ends_matrix ? rows_end + kPrefetchAhead : rows_end;
}

// Asks for the kBytes at p + kPrefetchAhead, unless they lie at or past `end` (from
// PrefetchLimit).
template <size_t kBytes>
HWY_INLINE void PrefetchAhead(const uint8_t* p, const uint8_t* end) {
  const uint8_t* ahead = p + kPrefetchAhead;
  if (ahead >= end) return;
  for (size_t line = 0; line < kBytes; line += 64) hwy::Prefetch(ahead + line);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
