// Which weight type each tensor gets in a file of a given type. llama.cpp's quantizer
// mixes types inside one file (Q4_K_M keeps some tensors in Q6_K, the output matrix in
// Q6_K, ...); synthesized models follow the same rules so they match real files in size
// and speed.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/file_type.h"
#include "gguf/types.h"

namespace nanoserve::model {

// AttnQkv: q, k and v in one matrix (phi3, gpt2), which llama-quantize treats as attn_v. The
// experts' 3-D tensors (ffn_*_exps) take FfnGate, FfnUp and FfnDown, one per layer.
enum class TensorRole { TokenEmbd, Output, AttnQ, AttnK, AttnV, AttnQkv, AttnOutput, FfnGate, FfnUp, FfnDown, Vector };

struct TensorSlot {
  TensorRole role;
  uint32_t layer = 0;      // for per-layer roles
  uint32_t n_layer = 1;
  uint64_t row_length = 0; // ne[0]
  uint32_t n_gqa = 1;      // query heads per KV head
  bool tied_output = false;  // token_embd doubles as the output matrix
  uint32_t n_expert = 0;     // a mixture of experts' expert count (8: llama-quantize's Mixtral rules)
  bool experts = false;      // a 3-D stack of expert matrices (MXFP4_MOE quantizes only these)
};

// A file type: the llama.cpp mix named by `name` (Q4_K_M, Q8_0, IQ4_XS, MXFP4_MOE, ...), or a
// single weight type applied to every matrix when `name` is a weight type only (Q4_K, Q5_K,
// Q3_K, MXFP4: like llama-quantize --pure).
struct WeightTypePlan {
  gguf::FileType file_type;      // written as general.file_type
  gguf::TensorType base;         // the type most matrices get
  bool mixed;                    // apply llama.cpp's per-tensor rules

  // Throws std::invalid_argument for an unknown or unsupported name.
  static WeightTypePlan from_name(const std::string& name);
  gguf::TensorType type_for(const TensorSlot& slot) const;
};

}  // namespace nanoserve::model
