// The llama.cpp references of ../shared/golden/models (see its README): per model, token
// sequences with the logits, argmaxes and greedy continuations llama.cpp computed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nanoserve::test {

struct GoldenSequence {
  std::vector<int32_t> input_ids;
  std::vector<int64_t> logit_positions;  // positions whose full logits are in the .bin
  int64_t bin_offset = 0;                // in floats
  std::vector<int32_t> argmax_all;       // per position
  std::vector<float> margin_all;         // top1 - top2 logit, per position
  std::vector<int32_t> top32_ids;        // at the last position, best first
  std::vector<float> top32_logits;
  std::vector<int32_t> greedy_ids;       // 32 greedy tokens after the sequence
  std::vector<float> greedy_margin;
};

struct GoldenModel {
  // "tiny-qwen3-Q4_K_M", "archs/tiny-phi3-F16", "tiny-qwen3-Q8_0.kvq8" (a Q8_0 cache),
  // "repo/tiny-phi3g3-F16.ctx8192" (another context size); after a dot: how llama.cpp ran it.
  std::string name;
  int64_t n_vocab = 0;
  int64_t n_ctx = 0;  // llama.cpp's context size (Phi-3's rope factors depend on it)
  std::vector<GoldenSequence> sequences;
  std::vector<float> bin;
  std::string model_name() const;  // the name without what follows a dot: the GGUF's
  std::string gguf_path() const;
  // The KV cache llama.cpp computed with: Q8_0 for the .kvq8 references (of the model without
  // the suffix), else F16.
  bool kv_q8() const { return name.ends_with(".kvq8"); }
  // The stored logits of a sequence at logit_positions[i].
  const float* stored_logits(const GoldenSequence& s, size_t i) const {
    return bin.data() + s.bin_offset + static_cast<int64_t>(i) * n_vocab;
  }
};

// Every golden model with logits (the README's table, F32 master excluded), those of archs/
// whose architecture nanoserve runs, and the references computed with a Q8_0 KV cache.
std::vector<std::string> golden_logit_models();
GoldenModel load_golden(const std::string& name);

}  // namespace nanoserve::test
