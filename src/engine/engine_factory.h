// Makes the engine the server runs, by kind: "batch" (continuous batching over a paged KV
// cache), "sequential" (one generation at a time) or "mock" (no weights: the model file gives
// only its tokenizer, name and chat template).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace nanoserve::engine {

struct EngineOptions {
  std::string kind = "batch";    // "batch" | "sequential" | "mock"
  std::string model_path = "";   // GGUF file
  int threads = 0;               // 0 = the machine's physical cores (batch, sequential)
  int64_t context_size = 0;      // per request; 0 = the trained context, at most 4096 (mock: 4096)
  int64_t queue_limit = 64;      // requests waiting for a free slot; more: QueueFull
  int parallel = 0;              // requests generated at once; 0 = the kind's default (see default_parallel)
  // batch only
  int64_t kv_memory_bytes = 0;   // the KV pool; 0 = context_size × parallel positions
  int64_t step_tokens = 0;       // rows per forward step; 0 = 512
  // mock only
  int64_t mock_token_delay_us = 0;
};

// Requests generated at once when options.parallel is 0: batch 8, mock 4, sequential 1.
int default_parallel(const std::string& kind);
// options.parallel, or the kind's default.
int parallel_of(const EngineOptions& options);

// Throws std::invalid_argument for an unknown kind or an option the kind cannot honour, and
// what the engine's constructor throws for a model it cannot load.
std::unique_ptr<Engine> make_engine(const EngineOptions& options);

}  // namespace nanoserve::engine
