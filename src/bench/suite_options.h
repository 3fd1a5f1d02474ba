// What `nanoserve bench suite` runs: which phases, against what, and each phase's sweep.
// Sizes left at 0 (or empty) take the full suite's values, or the quick suite's with
// --quick (a smaller sweep that fits in about 15 minutes on 2 cores).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_model.h"

namespace nanoserve::bench {

struct SuiteOptions {
  std::vector<std::string> phases;  // empty: all, in the suite's order
  std::string out_dir = "results/suite";
  bool quick = false;

  // The target: servers the suite starts (default), or one already running at `url`.
  std::string url;
  std::string api_key;
  // The model most phases run: a GGUF file, or else `main_model` synthesized (random
  // weights, cached) with the preset family's tokenizer from `tokenizers_dir`.
  std::string model_path;
  std::string main_model = "qwen2.5-0.5b:Q8_0";
  std::string tokenizers_dir = "../shared/tokenizers";
  int threads = 0;  // 0: the machine's physical cores
  int repeats = 0;  // measured requests per point, after a warm-up (3)
  int request_timeout_s = 1800;  // a 16k-token prefill on 2 busy cores can take 20 minutes
  int ready_timeout_s = 300;

  // context: prompt lengths (capped by the model's context), tokens generated at each, and
  // the KV cache types each length runs with ("f16", "q8_0").
  std::vector<int> context_lengths;
  int context_max_tokens = 0;
  std::vector<std::string> context_kv_types;
  // raw: ABBA pairs of (served, in-process) requests per arm: the sequential engine, the batch
  // engine with one stream, and the batch engine with `streams` requests at once on each side.
  int raw_pairs = 0, raw_prompt = 0, raw_max_tokens = 0;
  // overhead: requests to the mock engine (no token delay) and to the real one.
  int overhead_mock_requests = 0, overhead_engine_requests = 0;
  // concurrency: simultaneous streams per engine (`streams` also sizes raw's and spec's rounds).
  int streams = 0, concurrency_prompt = 0, concurrency_max_tokens = 0;
  std::vector<std::string> concurrency_engines;
  // prefix: a conversation (cold, follow-up, resend), a prompt across a restart, streams
  // sharing a system prompt; every request generates prefix_max_tokens.
  int prefix_prompt = 0, prefix_new_tokens = 0, prefix_restart_prompt = 0;
  int prefix_shared_prompt = 0, prefix_shared_distinct = 0, prefix_max_tokens = 0;
  // spec: speculative decoding. A forward step of 1..spec_rows rows (main model, in-process);
  // pycoder (spec_model_dir) continuing spec_files Python files of spec_source_dir (prompts of
  // spec_prompt tokens, spec_max_tokens greedy tokens) with speculation off, lookup and a draft
  // model, one stream and `streams` at once; the main model (random weights: nothing to
  // guess) off and lookup, spec_pairs ABBA pairs of one stream and of `streams` streams.
  std::string spec_model_dir = "../shared/models/pycoder";
  std::string spec_source_dir = "/usr/lib/python3.11";
  int spec_rows = 0, spec_files = 0, spec_prompt = 0, spec_max_tokens = 0, spec_pairs = 0;
  // spec's hybrid with a multi-token-prediction block; empty: the qwen3.5-0.8b preset, synthesized.
  std::string spec_mtp_model = "";
  // models: "preset:type" entries; TTFT measured at `models_ttft_prompt` tokens.
  std::vector<std::string> models;
  int models_max_tokens = 0, models_ttft_prompt = 0;
};

// Fills every size left at 0/empty with the full or quick value, and checks the rest:
// throws std::invalid_argument naming the first bad option.
SuiteOptions resolve_options(SuiteOptions options);

// The phases in the order the suite runs them.
const std::vector<std::string>& phase_names();

}  // namespace nanoserve::bench
