// What the lab knows of a model before it measures anything: its file and shape, read from the
// GGUF (mapped, no weights read), and the KV cache type the lab's servers use.
#pragma once

#include <cstdint>
#include <string>

#include "bench/bench_model.h"
#include "kernels/kv_type.h"

namespace nanoserve::lab {

struct ModelFacts {
  bench::BenchModel model;  // path, sizes, weight bytes per token, the tokens prompts are drawn from
  int64_t n_layer = 0;
  int64_t kv_layers = 0;  // layers that keep every position (sliding-window layers keep only their window)
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t context_length = 0;  // the trained context
  kernels::KvType kv_type = kernels::KvType::F16;
  double kv_value_bytes = 2;  // bytes per stored key or value element (F16 2, Q8_0 34/32)
};

// Throws when the file is not a model nanoserve can load, or `kv_type` is not f16 or q8_0.
ModelFacts read_model_facts(const std::string& path, const std::string& kv_type);

}  // namespace nanoserve::lab
