// Writes a model with random weights (~N(0, 0.02), norms ≈ 1) in the exact layout that
// llama.cpp's HF converter and quantizer produce, so it can stand in for a real model of
// the same shape in tests and benchmarks. Tensors are generated and quantized a slice at
// a time and streamed to disk: memory stays small whatever the model size.
#pragma once

#include <cstdint>
#include <string>

#include "model/config.h"

namespace nanoserve::synth {

struct SynthOptions {
  model::ModelConfig config;
  std::string name;            // general.name
  std::string type = "Q8_0";   // file type (Q4_K_M, ...) or weight type; see WeightTypePlan
  std::string out_path;
  std::string tokenizer_json;  // Hugging Face tokenizer.json; empty = built-in byte-level vocabulary
  // A Jinja chat template file to embed instead of the tokenizer's (gpt-oss ships its template
  // as chat_template.jinja, not in tokenizer_config.json); empty = the tokenizer's.
  std::string chat_template_path;
  uint64_t seed = 42;
  unsigned threads = 0;        // 0 = hardware concurrency
};

struct SynthReport {
  uint64_t n_params = 0;
  uint64_t file_bytes = 0;
  uint32_t n_tensors = 0;
};

SynthReport synthesize(const SynthOptions& options);

}  // namespace nanoserve::synth
