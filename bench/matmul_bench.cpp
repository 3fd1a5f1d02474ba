// Matmul kernels on the shapes of qwen2.5-0.5b (and pycoder's F32 gate and up), one thread,
// weights and activations in cache or not as the shape decides: 1 activation row (decode), 5 and
// 9 (verify steps), 8 (a batch's decode) and 64 (a prefill slice).
// Reports GMAC/s and, for decode, weight GB/s; quantize/Q8_0 and Q8_K time the activation rounding
// that precedes them. On a shared machine read the `min` rows
// (./build/bench/matmul_bench --benchmark_repetitions=9): the least disturbed run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernel_bench_main.h"
#include "kernels/matmul.h"
#include "tensor/quant.h"

namespace nanoserve::kernels {
namespace {

struct Case {
  TensorType type;
  int64_t n_in, n_out;
  bool interleaved = false;  // regrouped by 8 rows, as a loaded model's are on x86 (tensor/interleave.h)
  bool float_path = false;   // BF16: widened to floats even where the CPU multiplies BF16 pairs
};

void BM_Matmul(benchmark::State& state, Case c) {
  const int64_t rows = state.range(0);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> wf(c.n_in * c.n_out), x(c.n_in * rows), out(c.n_out * rows);
  for (auto& v : wf) v = dist(rng);
  for (auto& v : x) v = dist(rng);
  const uint64_t row_bytes = *gguf::row_bytes(c.type, c.n_in);
  std::vector<uint8_t> w(row_bytes * c.n_out);
  for (int64_t o = 0; o < c.n_out; ++o)
    tensor::quantize_row(c.type, wf.data() + o * c.n_in, w.data() + o * row_bytes, c.n_in);
  Matrix m{c.type, w.data(), c.n_in, c.n_out, row_bytes};
  ThreadPool pool(1);
  if (c.interleaved) interleave_rows(m, pool);
  MatmulScratch scratch(1, c.n_in);
  Activations acts;
  const bool pairs = bf16_pair_dots();
  set_bf16_pair_dots(!c.float_path);
  for (auto _ : state) {
    acts.set(x.data(), rows, c.n_in, c.n_in);  // includes quantizing the activations, as a forward does
    matmul(m, acts, out.data(), c.n_out, pool, scratch);
    benchmark::DoNotOptimize(out.data());
  }
  set_bf16_pair_dots(pairs);
  const double macs = static_cast<double>(c.n_in) * c.n_out * rows;
  state.counters["GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_GB/s"] =
      benchmark::Counter(static_cast<double>(w.size()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Rounding activation rows of 4864 (the down projection's input) to Q8_0 blocks, as every
// matmul over Q8_0/Q4_0/Q5_0 weights does first, or to Q8_K super-blocks, as over the K-quants.
void BM_Quantize(benchmark::State& state, ActType type) {
  const int64_t rows = state.range(0), n = 4864;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n * rows);
  for (auto& v : x) v = dist(rng);
  Activations acts;
  for (auto _ : state) {
    acts.set(x.data(), rows, n, n);
    acts.prepare(type);
    benchmark::DoNotOptimize(type == ActType::Q8_0 ? acts.q8_block32().q.data() : acts.q8_k().q.data());
  }
  state.counters["Gvalues/s"] =
      benchmark::Counter(static_cast<double>(n * rows) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void Register() {
  benchmark::RegisterBenchmark("quantize/Q8_0", BM_Quantize, ActType::Q8_0)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("quantize/Q8_K", BM_Quantize, ActType::Q8_K)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
  const Case cases[] = {
      {TensorType::Q8_0, 896, 4864}, {TensorType::Q8_0, 896, 4864, true}, {TensorType::Q4_0, 896, 4864},
      {TensorType::Q4_0, 896, 4864, true}, {TensorType::Q5_0, 896, 4864}, {TensorType::Q5_0, 896, 4864, true},
      {TensorType::Q4_K, 4864, 896}, {TensorType::Q4_K, 4864, 896, true}, {TensorType::Q6_K, 4864, 896},
      {TensorType::Q6_K, 4864, 896, true}, {TensorType::F16, 896, 4864}, {TensorType::F16, 4864, 896},
      {TensorType::F16, 896, 4864, true}, {TensorType::F16, 4864, 896, true},
      {TensorType::F32, 256, 1536, true},  // pycoder's gate and up
      {TensorType::IQ4_NL, 896, 4864},  {TensorType::IQ4_NL, 896, 4864, true}, {TensorType::MXFP4, 896, 4864},
      {TensorType::MXFP4, 896, 4864, true}, {TensorType::IQ4_XS, 4864, 896}, {TensorType::IQ4_XS, 4864, 896, true},
      {TensorType::Q5_1, 896, 4864},    {TensorType::Q5_K, 4864, 896},
      {TensorType::BF16, 896, 4864, true}, {TensorType::BF16, 896, 4864, true, true},
  };
  for (const Case& c : cases) {
    // F16 in both shapes (rows of 4864, the down projection's, are named "long").
    const bool long_float = c.n_in > c.n_out && c.type == TensorType::F16;
    const std::string name =
        "matmul/" + std::string(gguf::type_name(c.type)) + (c.interleaved ? "x8" : "") + (long_float ? "long" : "") +
        (c.float_path ? "-floats" : "");
    benchmark::RegisterBenchmark(name.c_str(), BM_Matmul, c)
        ->Arg(1)
        ->Arg(5)  // a verify step of 4 draft tokens
        ->Arg(8)
        ->Arg(9)  // 8 sequences, one of them with a draft token
        ->Arg(64)
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  }
}

}  // namespace
}  // namespace nanoserve::kernels

int main(int argc, char** argv) {
  nanoserve::kernels::Register();
  return nanoserve::bench::run_kernel_benchmarks(argc, argv);
}
