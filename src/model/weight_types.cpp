#include "model/weight_types.h"

#include <stdexcept>

#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

using gguf::TensorType;

// The weight type most matrices of a llama.cpp file type get.
std::optional<TensorType> base_type_of(std::string_view file_type) {
  struct Entry {
    std::string_view file_type;
    TensorType base;
  };
  static constexpr Entry kBases[] = {
      {"F32", TensorType::F32},     {"F16", TensorType::F16},     {"BF16", TensorType::BF16},
      {"Q8_0", TensorType::Q8_0},   {"Q4_0", TensorType::Q4_0},   {"Q4_1", TensorType::Q4_1},
      {"Q5_0", TensorType::Q5_0},   {"Q5_1", TensorType::Q5_1},   {"Q2_K", TensorType::Q2_K},
      {"Q3_K_S", TensorType::Q3_K}, {"Q3_K_M", TensorType::Q3_K}, {"Q3_K_L", TensorType::Q3_K},
      {"Q4_K_S", TensorType::Q4_K}, {"Q4_K_M", TensorType::Q4_K}, {"Q5_K_S", TensorType::Q5_K},
      {"Q5_K_M", TensorType::Q5_K}, {"Q6_K", TensorType::Q6_K},   {"IQ4_NL", TensorType::IQ4_NL},
      {"IQ4_XS", TensorType::IQ4_XS}, {"MXFP4_MOE", TensorType::MXFP4},
  };
  for (const auto& e : kBases)
    if (e.file_type == file_type) return e.base;
  return std::nullopt;
}

bool is_quantized(TensorType t) { return t != TensorType::F32 && t != TensorType::F16 && t != TensorType::BF16; }

// llama.cpp spends more bits on the first and last eighth of the layers and every third in between.
bool use_more_bits(uint32_t layer, uint32_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

// K-quant and IQ4_XS blocks span 256 values; a row that is not a multiple of that falls back
// to a 32-value type of similar size, as llama-quantize's tensor_type_fallback does.
TensorType fit_row(TensorType t, uint64_t row_length) {
  if (gguf::row_bytes(t, row_length)) return t;
  switch (t) {
    case TensorType::IQ4_XS: return TensorType::IQ4_NL;
    case TensorType::Q2_K:
    case TensorType::Q3_K: return TensorType::Q4_0;
    case TensorType::Q4_K: return TensorType::Q5_0;
    case TensorType::Q5_K: return TensorType::Q5_1;
    case TensorType::Q6_K: return TensorType::Q8_0;
    default: return TensorType::F16;
  }
}

}  // namespace

WeightTypePlan WeightTypePlan::from_name(const std::string& name) {
  if (auto ft = gguf::file_type_by_name(name)) {
    if (auto base = base_type_of(ft->name)) return {*ft, *base, is_quantized(*base)};
  }
  // A weight type that is not a file type of its own: every matrix gets it (written under the
  // file type named after it: Q4_K as Q4_K_M, MXFP4 as MXFP4_MOE).
  if (auto t = gguf::type_from_name(name); t && tensor::can_quantize(*t)) {
    const std::string type_name(gguf::type_name(*t));
    for (const std::string& as_file : {type_name + "_M", type_name + "_MOE"})
      if (auto ft = gguf::file_type_by_name(as_file)) return {*ft, *t, false};
  }
  throw std::invalid_argument("unknown or unsupported weight type '" + name +
                              "' (use F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, "
                              "Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, MXFP4_MOE, or Q3_K, Q4_K, Q5_K, "
                              "MXFP4 for a single type)");
}

TensorType WeightTypePlan::type_for(const TensorSlot& s) const {
  if (s.role == TensorRole::Vector) return TensorType::F32;
  if (!mixed) return fit_row(base, s.row_length);

  const std::string_view ft = file_type.name;
  TensorType t = base;
  const bool is_output = s.role == TensorRole::Output || (s.role == TensorRole::TokenEmbd && s.tied_output);
  if (is_output) {
    if (s.row_length % 256 != 0 || ft == "MXFP4_MOE") t = TensorType::Q8_0;
    else if (t != TensorType::Q8_0) t = TensorType::Q6_K;
    return t;  // already fits its row
  }
  // MXFP4_MOE (gpt-oss's own mix): the experts' stacks in MXFP4, every other matrix in Q8_0.
  if (ft == "MXFP4_MOE") return fit_row(s.experts ? TensorType::MXFP4 : TensorType::Q8_0, s.row_length);
  // llama-quantize's rules for its IQ4 mixes without an imatrix (nanoserve has none).
  const bool iq4 = ft == "IQ4_NL" || ft == "IQ4_XS";
  // llama-quantize's rules for models of exactly 8 experts (Mixtral's): K and V in Q8_0, the
  // attention output in Q5_K for the low-bit mixes.
  const bool eight_experts = s.n_expert == 8;
  switch (s.role) {
    case TensorRole::AttnK:
      if (eight_experts) t = TensorType::Q8_0;
      break;
    case TensorRole::AttnV:
    case TensorRole::AttnQkv:
      if (eight_experts) {
        t = TensorType::Q8_0;
        break;
      }
      if (ft == "Q2_K") t = s.n_gqa >= 4 ? TensorType::Q4_K : TensorType::Q3_K;
      else if (ft == "Q3_K_M") t = s.layer < 2 ? TensorType::Q5_K : TensorType::Q4_K;
      else if (ft == "Q3_K_L") t = TensorType::Q5_K;
      else if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(s.layer, s.n_layer)) t = TensorType::Q6_K;
      else if (ft == "Q4_K_S" && s.layer < 4) t = TensorType::Q5_K;
      else if (iq4 && s.n_gqa >= 4) t = TensorType::Q5_K;
      break;
    case TensorRole::FfnDown:
      if (ft == "Q2_K") t = TensorType::Q3_K;
      else if (ft == "Q3_K_M") t = s.layer < s.n_layer / 16 ? TensorType::Q5_K : TensorType::Q4_K;
      else if (ft == "Q3_K_L") t = TensorType::Q5_K;
      else if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(s.layer, s.n_layer)) t = TensorType::Q6_K;
      else if (ft == "Q4_K_S" && s.layer < s.n_layer / 8) t = TensorType::Q5_K;
      else if (iq4 && s.layer < s.n_layer / 8) t = TensorType::Q5_K;
      break;
    case TensorRole::AttnOutput:
      if (eight_experts) {
        if (ft == "Q2_K" || ft.starts_with("Q3_K") || ft == "Q4_K_S" || ft == "Q4_K_M" || iq4) t = TensorType::Q5_K;
      } else if (ft == "Q2_K") t = TensorType::Q3_K;
      else if (ft == "Q3_K_M") t = TensorType::Q4_K;
      else if (ft == "Q3_K_L") t = TensorType::Q5_K;
      break;
    default: break;
  }
  return fit_row(t, s.row_length);
}

}  // namespace nanoserve::model
