// Attention over a paged cache whose blocks interleave the sequences, as the batch engine's pool
// does, one thread; the cache in huge pages, as model::KvCache's is.
//   BM_DecodeStepAttention: one 8-sequence decode step on the shapes of qwen2.5-0.5b (24 layers,
//     2 KV heads of 64, 7 query heads each). Arguments: positions per sequence, and whether the
//     caches are flushed between iterations (by reading 256 MB) as the weights streaming through
//     a real step flush them: flushed is attention from memory, the case decode meets;
//     unflushed keeps what the last-level cache holds of the 34 MB at 350 positions. The third
//     argument is the cache's type: 0 F16, 1 Q8_0.
//   BM_VerifyStepAttention: one step of 8 sequences of rows at consecutive positions (a verify
//     step's k + 1 rows) on pycoder's shape (6 layers, 2 KV heads of 64, 4 query heads each),
//     after 640 positions, F16, unflushed (its 16 MB stay in the last-level cache). Argument:
//     rows per sequence. What a row costs beside the weights' read in speculative decoding.
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

constexpr int kHeadDim = 64, kBlock = 16, kSeqs = 8;

// Keys and values of kSeqs sequences of n_kv positions (random), every layer's, as KvCache lays
// out one group of blocks: per layer, each KV head's tiles in a run of their own; sequence s owns
// blocks s, s + 8, s + 16, ...: the order in which a step's sequences grow.
class PagedCache {
 public:
  PagedCache(int layers, int kv_heads, int64_t n_kv, KvType type)
      : type_(type),
        tile_(kv_tile_bytes(type, kHeadDim, kBlock)),
        n_blocks_((n_kv + kBlock - 1) / kBlock * kSeqs),
        head_stride_(n_blocks_ * tile_),
        layer_stride_(kv_heads * head_stride_),
        bytes_(static_cast<size_t>(layers * layer_stride_)),
        k_(bytes_),
        v_(bytes_),
        tables_(kSeqs) {
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto* buffer : {&k_, &v_}) {
      auto* x = reinterpret_cast<uint8_t*>(buffer->data());
      if (type == KvType::F16) {
        for (size_t i = 0; i < bytes_ / 2; ++i) reinterpret_cast<uint16_t*>(x)[i] = tensor::f32_to_f16(dist(rng));
        continue;
      }
      std::uniform_int_distribution<int> level(-127, 127);
      for (size_t i = 0; i < bytes_; ++i) x[i] = static_cast<uint8_t>(level(rng));
      const int64_t n_scales = kHeadDim / kKvQ8Block * kBlock;
      for (uint8_t* at = x; at < x + bytes_; at += tile_)  // every tile's scales after its levels
        std::fill_n(kv_q8_scales(at, kHeadDim, kBlock), n_scales, tensor::f32_to_f16(0.01f));
    }
    for (int s = 0; s < kSeqs; ++s)
      for (int64_t b = 0; b < n_blocks_ / kSeqs; ++b) tables_[s].push_back(static_cast<int32_t>(b * kSeqs + s));
  }

  KvView view(int layer, int seq) {
    const int64_t at = layer * layer_stride_;
    return {reinterpret_cast<const uint8_t*>(k_.data()) + at, reinterpret_cast<const uint8_t*>(v_.data()) + at,
            tables_[seq].data(), kBlock, tile_, head_stride_, n_blocks_, 0, type_};
  }
  // Bytes of the keys and values one position holds in a KV head.
  double position_bytes() const { return 2.0 * static_cast<double>(tile_) / kBlock; }

 private:
  KvType type_;
  int64_t tile_, n_blocks_, head_stride_, layer_stride_;
  size_t bytes_;
  HugePageBuffer k_, v_;
  std::vector<std::vector<int32_t>> tables_;
};

void BM_DecodeStepAttention(benchmark::State& state) {
  constexpr int kLayers = 24, kKvHeads = 2, kGroup = 7;
  const int64_t n_kv = state.range(0);
  PagedCache cache(kLayers, kKvHeads, n_kv, state.range(2) == 0 ? KvType::F16 : KvType::Q8_0);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
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
    for (int layer = 0; layer < kLayers; ++layer)
      for (int s = 0; s < kSeqs; ++s)
        for (int h = 0; h < kKvHeads; ++h)
          attention_heads(q.data(), 1, kGroup, cache.view(layer, s), h, kHeadDim, n_kv, 0.125f, scores.data(),
                          out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["KV_GB/s"] = benchmark::Counter(kLayers * kSeqs * kKvHeads * n_kv * cache.position_bytes() * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_VerifyStepAttention(benchmark::State& state) {
  constexpr int kLayers = 6, kKvHeads = 2, kGroup = 4;
  constexpr int64_t kContext = 640;
  const int rows = static_cast<int>(state.range(0));
  PagedCache cache(kLayers, kKvHeads, kContext + rows, KvType::F16);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(rows * kGroup * kHeadDim), out(q.size()), scores(rows * kGroup * (kContext + rows));
  for (auto& x : q) x = dist(rng);
  for (auto _ : state) {
    for (int layer = 0; layer < kLayers; ++layer)
      for (int s = 0; s < kSeqs; ++s)
        for (int h = 0; h < kKvHeads; ++h)
          attention_heads(q.data(), rows, kGroup, cache.view(layer, s), h, kHeadDim, kContext + 1, 0.125f,
                          scores.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  // Each query head's scores and weighted values: 2 multiply-adds a position and dimension.
  double positions = 0;
  for (int r = 0; r < rows; ++r) positions += static_cast<double>(kContext + 1 + r);
  state.counters["GFLOP/s"] = benchmark::Counter(
      4.0 * kLayers * kSeqs * kKvHeads * kGroup * kHeadDim * positions * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
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

BENCHMARK(BM_VerifyStepAttention)->Arg(1)->Arg(2)->Arg(5)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace nanoserve::kernels

int main(int argc, char** argv) { return nanoserve::bench::run_kernel_benchmarks(argc, argv); }
