// The prefix cache's bookkeeping, on the KV pool of qwen2.5-0.5b (24 layers, 2 KV heads of 64)
// as `serve` sizes it (8 sequences × 4096 positions), one thread:
//   DecodeStep: what the batch engine does to the cache in one decode step of 8 sequences of
//     `range(0)` positions: each sequence's shared-block count (the scheduler's view), its chain
//     hash extended by the new token, and its full blocks published (one in 16 steps has one).
//   AdmitCached: a request whose `range(0)`-token prompt is cached: its chain hashes, the lookup,
//     attaching the blocks (one copied) and letting go of them when it ends.
// Compare with a decode step of the same model (bench-engine on the same machine).
// ./build/bench/prefix_cache_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "engine/prefix_cache.h"
#include "model/kv_cache.h"

namespace nanoserve::engine {
namespace {

using model::KvCache;
using model::ModelConfig;

constexpr int kSeqs = 8;
constexpr int64_t kContext = 4096;

ModelConfig qwen25_05b() {
  return ModelConfig{.arch = "qwen2", .n_layer = 24, .n_embd = 896, .n_ff = 4864, .n_head = 14, .n_head_kv = 2,
                     .head_dim = 64, .n_vocab = 151936, .n_ctx_train = 32768, .rope_scaling = std::nullopt};
}

std::vector<int32_t> tokens(int64_t n, int32_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919 + seed * 104729) % 151000);
  return t;
}

void BM_DecodeStep(benchmark::State& state) {
  const int64_t positions = state.range(0);
  KvCache cache(qwen25_05b(), kSeqs * kContext, kSeqs);
  PrefixCache prefix(cache);
  std::vector<std::vector<int32_t>> seq_tokens(kSeqs);
  std::vector<std::vector<uint64_t>> hashes(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    seq_tokens[s] = tokens(positions, s);
    cache.reserve(s, positions);
    cache.set_length(s, positions);
    prefix.extend_chain(seq_tokens[s], hashes[s]);
    prefix.publish(s, seq_tokens[s], hashes[s]);
  }
  int32_t next = 0;
  for (auto _ : state) {
    int64_t shared = 0;
    for (int s = 0; s < kSeqs; ++s) shared += cache.shared_blocks(s);
    benchmark::DoNotOptimize(shared);
    for (int s = 0; s < kSeqs; ++s) {  // one new position each, as the forward pass leaves it
      std::vector<int32_t>& t = seq_tokens[s];
      t.push_back(next++ % 151000);
      const auto length = static_cast<int64_t>(t.size()) - 1;
      if (length >= kContext) {  // start over (outside the measured cost's spirit: rare)
        state.PauseTiming();
        prefix.release(s, t, hashes[s]);
        t.resize(static_cast<size_t>(positions));
        hashes[s].clear();
        cache.reserve(s, positions);
        cache.set_length(s, positions);
        prefix.extend_chain(t, hashes[s]);
        state.ResumeTiming();
        continue;
      }
      cache.reserve(s, length);
      cache.set_length(s, length);
      prefix.extend_chain(t, hashes[s]);
      prefix.publish(s, t, hashes[s]);
    }
  }
}
BENCHMARK(BM_DecodeStep)->Arg(512)->Arg(1400)->Arg(3500)->Unit(benchmark::kMicrosecond);

void BM_AdmitCached(benchmark::State& state) {
  const int64_t n = state.range(0);
  KvCache cache(qwen25_05b(), kSeqs * kContext, kSeqs);
  PrefixCache prefix(cache);
  const std::vector<int32_t> prompt = tokens(n, 1);
  std::vector<uint64_t> published;
  cache.reserve(0, n);
  cache.set_length(0, n);
  prefix.extend_chain(prompt, published);
  prefix.publish(0, prompt, published);
  prefix.release(0, prompt, published);
  for (auto _ : state) {
    std::vector<uint64_t> hashes;
    prefix.extend_chain(prompt, hashes);
    const PrefixCache::Hit hit = prefix.find(prompt, hashes, n - 1);
    prefix.attach(1, hit);
    prefix.release(1, prompt, hashes);
    benchmark::DoNotOptimize(hit.attachment.positions);
  }
}
BENCHMARK(BM_AdmitCached)->Arg(1400)->Arg(4096)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nanoserve::engine

BENCHMARK_MAIN();
