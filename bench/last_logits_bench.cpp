// The prefix cache's logits store (engine/last_logits_cache.h) at the sizes of a served
// qwen2.5-0.5b request: keeping a prompt's logits when its prefill ends (a 151,936-float row
// and the prompt's tokens) and the lookup each waiting request makes per step. Both are
// bookkeeping beside a decode step (~10-20 ms on 2 cores): compare the two.
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/last_logits_cache.h"

namespace nanoserve::engine {
namespace {

constexpr int64_t kVocab = 151936;
constexpr size_t kEntries = 32;  // 4 per slot, 8 slots

std::vector<int32_t> tokens(int64_t n, int seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = static_cast<int32_t>((i * 131 + seed * 977) % 150000);
  return t;
}

// A full cache: each put replaces the least recently used entry (reusing its memory).
void BM_KeepPromptLogits(benchmark::State& state) {
  const int64_t n = state.range(0);
  LastLogitsCache cache(kEntries);
  const std::vector<float> logits(kVocab, 0.5f);
  std::vector<std::vector<int32_t>> prompts;  // one more than fits: every put misses
  for (int i = 0; i <= static_cast<int>(kEntries); ++i) prompts.push_back(tokens(n, i));
  size_t next = 0;
  for (auto _ : state) {
    cache.put(prompts[next], logits);
    next = (next + 1) % prompts.size();
  }
  state.counters["row_MB"] = static_cast<double>(kVocab * sizeof(float)) / 1e6;
}
BENCHMARK(BM_KeepPromptLogits)->Arg(1430)->Arg(16384)->Unit(benchmark::kMicrosecond);

// A waiting request's lookup among a full cache that does not hold it (the worst case: every
// entry's hash compared).
void BM_LookUpPromptLogits(benchmark::State& state) {
  const int64_t n = state.range(0);
  LastLogitsCache cache(kEntries);
  const std::vector<float> logits(kVocab, 0.5f);
  for (int i = 0; i < static_cast<int>(kEntries); ++i) cache.put(tokens(n, i), logits);
  const std::vector<int32_t> prompt = tokens(n, 1000);
  for (auto _ : state) benchmark::DoNotOptimize(cache.contains(prompt));
}
BENCHMARK(BM_LookUpPromptLogits)->Arg(1430)->Arg(16384)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nanoserve::engine

BENCHMARK_MAIN();
