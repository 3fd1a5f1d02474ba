// Makes the engine the server runs, by kind: "batch" (continuous batching over a paged KV
// cache), "sequential" (one generation at a time) or "mock" (no weights: the model file gives
// only its tokenizer, name and chat template).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace nanoserve::engine {

struct BatchOptions;  // engine/batch_engine.h

struct EngineOptions {
  std::string kind = "batch";    // "batch" | "sequential" | "mock"
  std::string model_path = "";   // GGUF file
  int threads = 0;               // 0 = the machine's physical cores (batch, sequential)
  int64_t context_size = 0;      // per request; 0 = the default (engine/defaults.h; mock: kDefaultContext)
  int64_t queue_limit = 64;      // requests waiting for a free slot; more: QueueFull
  int parallel = 0;              // requests generated at once; 0 = the kind's default (see default_parallel)
  // batch only
  int64_t kv_memory_bytes = 0;   // the KV pool; 0 = context_size × parallel positions
  int64_t step_tokens = 0;       // rows per forward step; 0 = kDefaultStepTokens
  std::string prefix_cache = ""; // "on" | "off" | "" (the kind's default: on for batch, off elsewhere)
  std::string cache_dir = "";    // the prefix cache's disk tier; empty: none
  int64_t cache_disk_bytes = 0;  // its bound; 0 with a cache_dir: kDefaultCacheDiskBytes
  std::string spec = "";         // speculative decoding: "off" | "lookup" | "draft" | "" (batch: lookup; else off)
  int64_t draft_max = 0;         // draft tokens per sequence and step at most; 0 = kDefaultDraftMax
  std::string draft_model = "";  // spec "draft": the draft model's GGUF file
  // How long the drafts are: "adaptive" (per sequence from measured acceptance and step costs,
  // none where they do not pay), "always" (as long as the drafter can, up to draft_max, as
  // llama.cpp's and vLLM's fixed-length speculation) or "" (adaptive)
  std::string draft_policy = "";
  // batch and sequential
  std::string kv_type = "";      // the KV cache's: "f16" | "q8_0" | "" (NANOSERVE_KV_TYPE, else f16)
  // mock only
  int64_t mock_token_delay_us = 0;
  std::string mock_passage = "";  // the text it repeats; empty: kMockPassage
  bool mock_echo = false;         // repeat each request's prompt instead
};

// Requests generated at once when options.parallel is 0: batch 8, mock 4, sequential 1.
int default_parallel(const std::string& kind);
// options.parallel, or the kind's default.
int parallel_of(const EngineOptions& options);

// The disk tier's bound when --cache-dir comes without --cache-disk.
inline constexpr int64_t kDefaultCacheDiskBytes = int64_t{4} << 30;

// Bounds on what the options may ask for.
inline constexpr int kMaxParallel = 256;
inline constexpr int64_t kMaxDraftTokens = 64;
inline constexpr int64_t kMaxStepTokens = 16384;

// The one check of engine options, for every command that makes an engine: throws
// std::invalid_argument, naming the command-line flag, for an unknown kind, a value out of
// bounds, or an option the kind would ignore (one code path per option: refused, not ignored).
void check_engine_options(const EngineOptions& options);

// What a batch engine is made with from checked options (the kind's defaults filled in).
BatchOptions batch_options(const EngineOptions& options);

// Checks the options (check_engine_options), then makes the engine; throws what the engine's
// constructor throws for a model it cannot load.
std::unique_ptr<Engine> make_engine(const EngineOptions& options);

}  // namespace nanoserve::engine
