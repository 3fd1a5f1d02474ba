// Attention of one 8-sequence decode step on the shapes of qwen2.5-0.5b (24 layers, 2 KV heads
// of 64, 7 query heads each), over a paged cache whose blocks interleave the sequences, as the
// batch engine's pool does, one thread. Arguments: positions per sequence, and whether the
// caches are flushed between iterations (by reading 256 MB) as the weights streaming through a
// real step flush them: flushed is attention from memory, the case decode meets; unflushed
// keeps what the last-level cache holds of the 34 MB at 350 positions. The cache is in huge
// pages, as model::KvCache's is. The third argument is the cache's type: 0 F16, 1 Q8_0.
// ./build/bench/attention_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "kernel_bench_main.h"
#include "kernels/attention.h"
#include "kernels/huge_pages.h"
#include "tensor/fp16.h"

namespace nanoserve::kernels {
namespace {

constexpr int kLayers = 24, kKvHeads = 2, kGroup = 7, kHeadDim = 64, kBlock = 16, kSeqs = 8;

void BM_DecodeStepAttention(benchmark::State& state) {
  const int64_t n_kv = state.range(0);
  const int64_t blocks_per_seq = (n_kv + kBlock - 1) / kBlock, n_blocks = blocks_per_seq * kSeqs;
  // As KvCache lays out one group of blocks: per layer, each KV head's tiles in a run of their own.
  const KvType type = state.range(2) == 0 ? KvType::F16 : KvType::Q8_0;
  const int64_t tile = kv_tile_bytes(type, kHeadDim, kBlock), head_stride = n_blocks * tile;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const size_t n_bytes = int64_t{kLayers} * kKvHeads * head_stride;
  HugePageBuffer k_buffer(n_bytes), v_buffer(n_bytes);
  auto* k = reinterpret_cast<uint8_t*>(k_buffer.data());
  auto* v = reinterpret_cast<uint8_t*>(v_buffer.data());
  for (uint8_t* x : {k, v}) {
    if (type == KvType::F16) {
      for (size_t i = 0; i < n_bytes / 2; ++i) reinterpret_cast<uint16_t*>(x)[i] = tensor::f32_to_f16(dist(rng));
      continue;
    }
    std::uniform_int_distribution<int> level(-127, 127);
    for (size_t i = 0; i < n_bytes; ++i) x[i] = static_cast<uint8_t>(level(rng));
    const int64_t n_scales = kHeadDim / kKvQ8Block * kBlock;
    for (uint8_t* at = x; at < x + n_bytes; at += tile)  // every tile's scales after its levels
      std::fill_n(kv_q8_scales(at, kHeadDim, kBlock), n_scales, tensor::f32_to_f16(0.01f));
  }
  // Sequence s owns blocks s, s + 8, s + 16, ...: the order in which a step's sequences grow.
  std::vector<std::vector<int32_t>> tables(kSeqs);
  for (int s = 0; s < kSeqs; ++s)
    for (int64_t b = 0; b < blocks_per_seq; ++b) tables[s].push_back(static_cast<int32_t>(b * kSeqs + s));
  std::vector<float> q(kGroup * kHeadDim), out(kGroup * kHeadDim), scores(kGroup * n_kv);
  for (auto& x : q) x = dist(rng);
  std::vector<float> flush(64 << 20);  // 256 MB
  std::iota(flush.begin(), flush.end(), 0.0f);
  for (auto _ : state) {
    state.PauseTiming();
    float sum = 0.0f;
    if (state.range(1) != 0)
      for (size_t i = 0; i < flush.size(); i += 16) sum += flush[i];
    benchmark::DoNotOptimize(sum);
    state.ResumeTiming();
    for (int layer = 0; layer < kLayers; ++layer) {
      const int64_t layer_offset = int64_t{layer} * kKvHeads * head_stride;
      for (int s = 0; s < kSeqs; ++s) {
        const KvView kv{k + layer_offset, v + layer_offset, tables[s].data(), kBlock, tile, head_stride, n_blocks, 0,
                        type};
        for (int h = 0; h < kKvHeads; ++h)
          attention_heads(q.data(), 1, kGroup, kv, h, kHeadDim, n_kv, 0.125f, scores.data(), out.data());
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["KV_GB/s"] = benchmark::Counter(
      2.0 * kLayers * kSeqs * kKvHeads * n_kv * static_cast<double>(tile) / kBlock * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_DecodeStepAttention)
    ->Args({350, 1, 0})
    ->Args({350, 0, 0})
    ->Args({350, 0, 1})
    ->Args({2000, 1, 0})
    ->Args({350, 1, 1})
    ->Args({2000, 1, 1})
    ->Args({16000, 1, 0})
    ->Args({16000, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace nanoserve::kernels

int main(int argc, char** argv) { return nanoserve::bench::run_kernel_benchmarks(argc, argv); }
