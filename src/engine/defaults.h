// The defaults that every engine and command shares, so that an option left out means the
// same in `run`, `serve` and the benchmarks.
#pragma once

#include <algorithm>
#include <cstdint>

namespace nanoserve::engine {

// A request's context when none is asked for: the trained one, at most this many tokens (a
// model trained on 40k positions would otherwise reserve a KV cache for all of them).
inline constexpr int64_t kDefaultContext = 4096;

// Rows of one forward call: the batch engine's step budget, and the chunks in which every
// engine prefills a prompt (larger chunks add little speed and a lot of activation memory).
inline constexpr int64_t kDefaultStepTokens = 512;

// Speculative decoding: draft tokens one sequence checks in a step at most (--draft-max).
inline constexpr int64_t kDefaultDraftMax = 8;

// `requested`, or the default context for a model trained on n_ctx_train positions.
inline int64_t context_size_for(int64_t requested, int64_t n_ctx_train) {
  return requested > 0 ? requested : std::min(n_ctx_train, kDefaultContext);
}

}  // namespace nanoserve::engine
