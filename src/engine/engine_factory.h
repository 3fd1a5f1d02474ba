// Makes the engine the server runs, by kind: "mock" (no weights: the model file gives only
// its tokenizer, name and chat template) or "sequential" (one generation at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace nanoserve::engine {

struct EngineOptions {
  std::string kind = "sequential";  // "mock" | "sequential"
  std::string model_path = "";      // GGUF file
  int threads = 0;                  // 0 = the machine's physical cores (sequential)
  int64_t context_size = 0;         // 0 = the trained context, at most 4096 (mock: 4096)
  int64_t queue_limit = 64;         // requests waiting for a free slot; more: QueueFull
  // mock only
  int64_t mock_token_delay_us = 0;
  int mock_max_concurrency = 4;
};

// Throws std::invalid_argument for an unknown kind, and what the engine's constructor throws
// for a model it cannot load.
std::unique_ptr<Engine> make_engine(const EngineOptions& options);

}  // namespace nanoserve::engine
