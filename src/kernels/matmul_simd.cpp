// The SIMD body of matmul, compiled once per Highway target and dispatched at run time.
// It computes what matmul_range_reference computes: float rows with vector FMAs, quantized
// rows as exact integer group sums (so those results equal the reference bit for bit).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matmul_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/matmul_range.h"
#include "tensor/fp16.h"

HWY_BEFORE_NAMESPACE();
namespace nanoserve::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

float DotF32(const float* w, const float* a, int64_t n) {
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto sum0 = hn::Zero(df), sum1 = hn::Zero(df);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    sum0 = hn::MulAdd(hn::LoadU(df, w + i), hn::LoadU(df, a + i), sum0);
    sum1 = hn::MulAdd(hn::LoadU(df, w + i + N), hn::LoadU(df, a + i + N), sum1);
  }
  for (; i + N <= n; i += N) sum0 = hn::MulAdd(hn::LoadU(df, w + i), hn::LoadU(df, a + i), sum0);
  float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(sum0, sum1)));
  for (; i < n; ++i) sum += w[i] * a[i];
  return sum;
}

// F16 or BF16 rows (T = hwy::float16_t or hwy::bfloat16_t): widen to float, then FMA.
template <class T>
float DotHalf(const uint16_t* w_bits, const uint16_t* a_bits, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<T, decltype(df)> dh;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const T* w = reinterpret_cast<const T*>(w_bits);
  const T* a = reinterpret_cast<const T*>(a_bits);
  auto sum0 = hn::Zero(df), sum1 = hn::Zero(df);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    sum0 = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, w + i)), hn::PromoteTo(df, hn::LoadU(dh, a + i)), sum0);
    sum1 = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, w + i + N)), hn::PromoteTo(df, hn::LoadU(dh, a + i + N)), sum1);
  }
  for (; i + N <= n; i += N)
    sum0 = hn::MulAdd(hn::PromoteTo(df, hn::LoadU(dh, w + i)), hn::PromoteTo(df, hn::LoadU(dh, a + i)), sum0);
  float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(sum0, sum1)));
  constexpr bool kF16 = std::is_same_v<T, hwy::float16_t>;
  for (; i < n; ++i) {
    const float wi = kF16 ? tensor::f16_to_f32(w_bits[i]) : tensor::bf16_to_f32(w_bits[i]);
    const float ai = kF16 ? tensor::f16_to_f32(a_bits[i]) : tensor::bf16_to_f32(a_bits[i]);
    sum += wi * ai;
  }
  return sum;
}

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

void MatmulRange(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups) {
  const Matrix& w = *task.w;
  const Activations& acts = *task.acts;
  const int64_t n = w.n_in;
  const ActType act = act_type_for(w.type);
  for (int64_t o = o0; o < o1; ++o) {
    const uint8_t* wrow = w.data + o * w.row_bytes;
    if (decodes_to_levels(w.type)) decode_row(w.type, wrow, n, row);
    for (int64_t r = 0; r < acts.n_rows(); ++r) {
      float result;
      switch (act) {
        case ActType::F32: result = DotF32(reinterpret_cast<const float*>(wrow), acts.f32(r), n); break;
        case ActType::F16:
          result = DotHalf<hwy::float16_t>(reinterpret_cast<const uint16_t*>(wrow), acts.f16(r), n);
          break;
        case ActType::BF16:
          result = DotHalf<hwy::bfloat16_t>(reinterpret_cast<const uint16_t*>(wrow), acts.bf16(r), n);
          break;
        default: {
          const Q8Row a = q8_row(acts, act, r);
          GroupDots16(row.q.data(), a.q, n, groups);
          result = combine(w.type, row, groups, a, n);
        }
      }
      task.out[r * task.out_stride + o] = result;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace nanoserve::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace nanoserve::kernels {

HWY_EXPORT(MatmulRange);

void matmul_range_simd(const MatmulTask& task, int64_t o0, int64_t o1, DecodedRow& row, int32_t* groups) {
  HWY_DYNAMIC_DISPATCH(MatmulRange)(task, o0, o1, row, groups);
}

}  // namespace nanoserve::kernels
#endif
