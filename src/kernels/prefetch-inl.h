// Software prefetch of the weight stream, for the matmul kernels of every Highway target
// (Highway's -inl pattern: included inside a per-target namespace).
//
// For kernels that read several weight streams at once (tiles of rows), or one stream with
// much arithmetic per byte (interleaved groups against four or more activation rows): the
// hardware prefetchers follow one sequential stream at the full rate when little work comes
// between its lines, but several streams a few KiB apart poorly, so decode reads each matrix as
// one stream with none of these requests (matmul_range.h, kStreamRows). Two requests per
// stretch of the stream: into L1 kPrefetchAhead ahead, and into L2 only kPrefetchFarAhead ahead,
// which keeps more lines in flight than the L1's few fill buffers allow. The L1 request pays
// only in kernels with much arithmetic per byte (the K-quants, whose scales and mins are
// unpacked per super-block): elsewhere it takes a fill buffer the L2 stream needs more.
// Distances chosen by measurement: experiments/kernel-notes.md.
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

constexpr size_t kPrefetchAhead = 8 * 1024;
constexpr size_t kPrefetchFarAhead = 32 * 1024;

// Where the prefetches of a thread whose weight rows end at `rows_end` stop: there, unless its
// rows end the matrix. The rows after them are another thread's, and fetching those into this
// core's cache spends bandwidth that the other core spends again. Past the matrix's end lies,
// in a GGUF file written layer by layer, the next matrix of the forward pass, which the next
// call reads after the serial work between the two (norms, attention): fetching its start
// while that work runs costs nothing. (A prefetch past the end of a mapping does not fault.)
inline const uint8_t* PrefetchLimit(const uint8_t* rows_end, bool ends_matrix) {
  return ends_matrix ? rows_end + kPrefetchAhead : rows_end;
}

// The limit for rows read as one stream with no requests ahead (decode, kStreamRows): their
// start, which every prefetch lies past.
inline const uint8_t* NoPrefetch(const uint8_t* rows_begin) { return rows_begin; }

// Which caches a kernel asks for its weight lines into (see the top of this file).
enum class Ahead { kL2, kL1AndL2 };

// Asks for the kBytes at p + kPrefetchFarAhead into L2 and, with Ahead::kL1AndL2, those at
// p + kPrefetchAhead into L1 too, each unless they lie at or past `end` (from PrefetchLimit).
template <size_t kBytes, Ahead kWhere>
HWY_INLINE void PrefetchAhead(const uint8_t* p, const uint8_t* end) {
  if constexpr (kWhere == Ahead::kL1AndL2) {
    const uint8_t* ahead = p + kPrefetchAhead;
    if (ahead >= end) return;
    for (size_t line = 0; line < kBytes; line += 64) hwy::Prefetch(ahead + line);
  }
  const uint8_t* far = p + kPrefetchFarAhead;
  if (far >= end) return;
  // Highway's Prefetch is T0 only; locality 1 is x86's prefetcht2 (a hint elsewhere).
  for (size_t line = 0; line < kBytes; line += 64) __builtin_prefetch(far + line, 0, 1);
}

// Asks for the lines of `tile` up to `until` (bytes from its start) that `*next` (a cursor
// into it) has not reached yet: the attention kernels fetch a KV block's tile line by line
// while they work on the block before it.
HWY_INLINE void PrefetchUntil(const uint8_t* tile, int64_t until, const uint8_t*& next) {
  for (; next < tile + until; next += 64) hwy::Prefetch(next);
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#endif  // include guard
