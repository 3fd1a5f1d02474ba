#include "synth/synth.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gguf/writer.h"
#include "model/weight_types.h"
#include "synth/random.h"
#include "synth/synth_vocab.h"
#include "tensor/quant.h"

namespace nanoserve::synth {
namespace {

using gguf::TensorType;
using gguf::Value;
using model::Llama3RopeScaling;
using model::ModelConfig;
using model::TensorRole;
using model::TensorSlot;
using model::WeightTypePlan;

constexpr float kWeightStd = 0.02f;

// Decay: a delta-net value head's ssm_a = -exp(A_log), negative so that its state decays.
enum class Fill { Normal, NearOne, RopeFreqs, Decay };

struct PlannedTensor {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;  // dims[0] = row length
  Fill fill;
};

// Tensor names and shapes as llama.cpp's converter writes them (dims[0] = input size), for
// every architecture's features (model/config.h).
std::vector<PlannedTensor> plan_tensors(const ModelConfig& c, const WeightTypePlan& plan) {
  std::vector<PlannedTensor> out;
  const model::ArchFeatures& f = c.features;
  const uint32_t n_gqa = c.n_head / c.n_head_kv;
  // A matrix, or with n_mat > 1 a stack of them (the experts' 3-D tensors).
  auto matrix = [&](std::string name, TensorRole role, uint32_t layer, uint64_t in, uint64_t rows,
                    uint64_t n_mat = 1) {
    TensorSlot slot{role, layer, c.n_layer, in, n_gqa, c.tied_output, c.n_expert, n_mat > 1};
    std::vector<uint64_t> dims = {in, rows};
    if (n_mat > 1) dims.push_back(n_mat);
    out.push_back({std::move(name), plan.type_for(slot), std::move(dims), Fill::Normal});
  };
  // F32 whatever the file type: norms, biases, routers, position embeddings, rope factors.
  auto floats = [&](std::string name, std::vector<uint64_t> dims, Fill fill) {
    out.push_back({std::move(name), TensorType::F32, std::move(dims), fill});
  };
  const bool layer_norm = f.norm == model::ArchFeatures::Norm::Layer;
  auto norm = [&](const std::string& name) {
    floats(name + ".weight", {c.n_embd}, Fill::NearOne);
    if (layer_norm) floats(name + ".bias", {c.n_embd}, Fill::Normal);
  };

  matrix("token_embd.weight", TensorRole::TokenEmbd, 0, c.n_embd, c.n_vocab);
  if (f.position_embd) floats("position_embd.weight", {c.n_embd, c.n_ctx_train}, Fill::Normal);
  if (c.rope_scaling) floats("rope_freqs.weight", {c.head_dim / 2}, Fill::RopeFreqs);
  if (c.rope_original_context) {  // Phi-3's LongRoPE factors, divisors near 1
    floats("rope_factors_long.weight", {c.rope_dims() / 2}, Fill::NearOne);
    floats("rope_factors_short.weight", {c.rope_dims() / 2}, Fill::NearOne);
  }
  // An attention layer's projections (gated_q: each head's q rows then its gate's).
  auto plan_attention = [&](const std::string& blk, uint32_t i) {
    if (f.fused_qkv) {
      matrix(blk + "attn_qkv.weight", TensorRole::AttnQkv, i, c.n_embd, c.q_dim() + 2 * c.kv_dim());
      if (f.qkv_bias) floats(blk + "attn_qkv.bias", {c.q_dim() + 2 * c.kv_dim()}, Fill::Normal);
    } else {
      matrix(blk + "attn_q.weight", TensorRole::AttnQ, i, c.n_embd, (f.gated_q ? 2 : 1) * c.q_dim());
      matrix(blk + "attn_k.weight", TensorRole::AttnK, i, c.n_embd, c.kv_dim());
      matrix(blk + "attn_v.weight", TensorRole::AttnV, i, c.n_embd, c.kv_dim());
      if (f.qkv_bias) {
        floats(blk + "attn_q.bias", {c.q_dim()}, Fill::Normal);
        floats(blk + "attn_k.bias", {c.kv_dim()}, Fill::Normal);
        floats(blk + "attn_v.bias", {c.kv_dim()}, Fill::Normal);
      }
    }
    if (f.qk_norm) {
      floats(blk + "attn_q_norm.weight", {c.head_dim}, Fill::NearOne);
      floats(blk + "attn_k_norm.weight", {c.head_dim}, Fill::NearOne);
    }
    matrix(blk + "attn_output.weight", TensorRole::AttnOutput, i, c.q_dim(), c.n_embd);
  };
  // The model's layers, then its multi-token-prediction blocks (attention layers with the nextn
  // projections, as llama.cpp's converter writes Qwen3.5's).
  for (uint32_t i = 0; i < c.n_layer + c.n_nextn; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    const bool nextn = i >= c.n_layer;
    norm(blk + "attn_norm");
    if (!nextn && c.recurrent(i)) {  // a delta-net layer
      const uint64_t channels = c.ssm_conv_channels(), heads = c.ssm_value_heads;
      matrix(blk + "attn_qkv.weight", TensorRole::AttnQkv, i, c.n_embd, channels);
      matrix(blk + "attn_gate.weight", TensorRole::AttnQ, i, c.n_embd, c.ssm_inner);
      floats(blk + "ssm_conv1d.weight", {c.ssm_conv_kernel, channels}, Fill::Normal);
      floats(blk + "ssm_dt.bias", {heads}, Fill::Normal);
      floats(blk + "ssm_a", {heads}, Fill::Decay);
      matrix(blk + "ssm_beta.weight", TensorRole::AttnQ, i, c.n_embd, heads);
      matrix(blk + "ssm_alpha.weight", TensorRole::AttnQ, i, c.n_embd, heads);
      floats(blk + "ssm_norm.weight", {c.ssm_head_dim}, Fill::NearOne);
      matrix(blk + "ssm_out.weight", TensorRole::AttnOutput, i, c.ssm_inner, c.n_embd);
    } else {
      plan_attention(blk, i);
    }
    if (f.projection_bias || f.attn_output_bias) floats(blk + "attn_output.bias", {c.n_embd}, Fill::Normal);
    if (f.attn_sinks) floats(blk + "attn_sinks.weight", {c.n_head}, Fill::Normal);
    if (f.post_norms) norm(blk + "post_attention_norm");
    norm(blk + (f.ffn_norm_named_post_attention ? "post_attention_norm" : "ffn_norm"));  // the Qwen3.5 family's name for it
    if (f.moe) {
      floats(blk + "ffn_gate_inp.weight", {c.n_embd, c.n_expert}, Fill::Normal);
      matrix(blk + "ffn_gate_exps.weight", TensorRole::FfnGate, i, c.n_embd, c.n_ff_expert, c.n_expert);
      matrix(blk + "ffn_up_exps.weight", TensorRole::FfnUp, i, c.n_embd, c.n_ff_expert, c.n_expert);
      matrix(blk + "ffn_down_exps.weight", TensorRole::FfnDown, i, c.n_ff_expert, c.n_embd, c.n_expert);
      if (f.expert_bias) {
        floats(blk + "ffn_gate_inp.bias", {c.n_expert}, Fill::Normal);
        floats(blk + "ffn_gate_exps.bias", {c.n_ff_expert, c.n_expert}, Fill::Normal);
        floats(blk + "ffn_up_exps.bias", {c.n_ff_expert, c.n_expert}, Fill::Normal);
        floats(blk + "ffn_down_exps.bias", {c.n_embd, c.n_expert}, Fill::Normal);
      }
      if (f.shared_expert) {
        floats(blk + "ffn_gate_inp_shexp.weight", {c.n_embd}, Fill::Normal);
        matrix(blk + "ffn_gate_shexp.weight", TensorRole::FfnGate, i, c.n_embd, c.n_ff_shared);
        matrix(blk + "ffn_up_shexp.weight", TensorRole::FfnUp, i, c.n_embd, c.n_ff_shared);
        matrix(blk + "ffn_down_shexp.weight", TensorRole::FfnDown, i, c.n_ff_shared, c.n_embd);
      }
    } else {
      if (f.ffn != model::ArchFeatures::Ffn::Gelu && !f.fused_gate_up)
        matrix(blk + "ffn_gate.weight", TensorRole::FfnGate, i, c.n_embd, c.n_ff);
      matrix(blk + "ffn_up.weight", TensorRole::FfnUp, i, c.n_embd, f.fused_gate_up ? 2 * c.n_ff : c.n_ff);
      if (f.projection_bias) floats(blk + "ffn_up.bias", {c.n_ff}, Fill::Normal);
      matrix(blk + "ffn_down.weight", TensorRole::FfnDown, i, c.n_ff, c.n_embd);
      if (f.projection_bias) floats(blk + "ffn_down.bias", {c.n_embd}, Fill::Normal);
    }
    if (f.post_norms) norm(blk + "post_ffw_norm");
    if (nextn) {
      matrix(blk + "nextn.eh_proj.weight", TensorRole::AttnOutput, i, 2 * c.n_embd, c.n_embd);
      for (const char* n : {"nextn.enorm", "nextn.hnorm", "nextn.shared_head_norm"}) norm(blk + n);
    }
  }
  norm("output_norm");
  if (!c.tied_output) matrix("output.weight", TensorRole::Output, 0, c.n_embd, c.n_vocab);
  return out;
}

// Llama 3 scaling as the converter bakes it into rope_freqs: a divisor of each rotary
// frequency, 1 for short wavelengths, `factor` for long ones, a smooth blend between.
std::vector<float> llama3_rope_factors(const ModelConfig& c) {
  const Llama3RopeScaling& s = *c.rope_scaling;
  const double low_wavelen = s.original_context / s.low_freq_factor;
  const double high_wavelen = s.original_context / s.high_freq_factor;
  std::vector<float> f;
  for (uint32_t i = 0; i < c.head_dim / 2; ++i) {
    double freq = 1.0 / std::pow(static_cast<double>(c.rope_base), 2.0 * i / c.head_dim);
    double wavelen = 2 * M_PI / freq;
    if (wavelen < high_wavelen) {
      f.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      f.push_back(s.factor);
    } else {
      double smooth = (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f.push_back(static_cast<float>(1.0 / ((1 - smooth) / s.factor + smooth)));
    }
  }
  return f;
}

void set_model_metadata(gguf::Writer& w, const SynthOptions& o, const WeightTypePlan& plan) {
  const ModelConfig& c = o.config;
  const model::ArchFeatures& f = c.features;
  const std::string a = c.arch + ".";
  w.set("general.architecture", Value::string(c.arch));
  w.set("general.type", Value::string("model"));
  w.set("general.name", Value::string(o.name));
  w.set(a + "block_count", Value::u32(c.n_layer + c.n_nextn));
  if (c.n_nextn) w.set(a + "nextn_predict_layers", Value::u32(c.n_nextn));
  w.set(a + "context_length", Value::u32(c.n_ctx_train));
  w.set(a + "embedding_length", Value::u32(c.n_embd));
  w.set(a + "feed_forward_length", Value::u32(c.n_ff));
  w.set(a + "attention.head_count", Value::u32(c.n_head));
  if (f.norm == model::ArchFeatures::Norm::Layer) {  // gpt2: no KV head count, no RoPE
    w.set(a + "attention.layer_norm_epsilon", Value::f32(c.rms_eps));
  } else {
    w.set(a + "attention.head_count_kv", Value::u32(c.n_head_kv));
    w.set(a + "rope.freq_base", Value::f32(c.rope_base));
    w.set(a + "attention.layer_norm_rms_epsilon", Value::f32(c.rms_eps));
  }
  if (f.writes_key_length || c.head_dim != c.n_embd / c.n_head) {
    w.set(a + "attention.key_length", Value::u32(c.head_dim));
    w.set(a + "attention.value_length", Value::u32(c.head_dim));
  }
  if (f.writes_vocab_size) {
    w.set(a + "vocab_size", Value::u32(c.n_vocab));
    w.set(a + "rope.dimension_count", Value::u32(c.head_dim));
  }
  if (c.rope_original_context) {  // Phi-3's LongRoPE
    w.set(a + "rope.dimension_count", Value::u32(c.rope_dims()));
    w.set(a + "rope.scaling.original_context_length", Value::u32(c.rope_original_context));
    w.set(a + "rope.scaling.attn_factor", Value::f32(c.rope_attn_factor));
  }
  if (f.swa_own_rope) w.set(a + "rope.freq_base_swa", Value::f32(c.rope_base_swa));
  if (c.sliding_window) w.set(a + "attention.sliding_window", Value::u32(c.sliding_window));
  if (const auto& y = c.rope_yarn) {  // as llama.cpp's converter writes gpt-oss's rope_scaling
    w.set(a + "rope.scaling.type", Value::string("yarn"));
    w.set(a + "rope.scaling.factor", Value::f32(y->factor));
    w.set(a + "rope.scaling.original_context_length", Value::u32(y->original_context));
    w.set(a + "rope.scaling.yarn_beta_fast", Value::f32(y->beta_fast));
    w.set(a + "rope.scaling.yarn_beta_slow", Value::f32(y->beta_slow));
  }
  if (c.rope_freq_scale != 1.0f) {
    w.set(a + "rope.scaling.type", Value::string("linear"));
    w.set(a + "rope.scaling.factor", Value::f32(1.0f / c.rope_freq_scale));
  }
  if (f.moe) {
    w.set(a + "expert_count", Value::u32(c.n_expert));
    w.set(a + "expert_used_count", Value::u32(c.n_expert_used));
    w.set(a + "expert_feed_forward_length", Value::u32(c.n_ff_expert));
  }
  if (f.shared_expert) w.set(a + "expert_shared_feed_forward_length", Value::u32(c.n_ff_shared));
  if (f.delta_net) {
    w.set(a + "ssm.conv_kernel", Value::u32(c.ssm_conv_kernel));
    w.set(a + "ssm.state_size", Value::u32(c.ssm_head_dim));
    w.set(a + "ssm.group_count", Value::u32(c.ssm_key_heads));
    w.set(a + "ssm.time_step_rank", Value::u32(c.ssm_value_heads));
    w.set(a + "ssm.inner_size", Value::u32(c.ssm_inner));
    w.set(a + "full_attention_interval", Value::u32(c.full_attention_interval));
    w.set(a + "rope.dimension_count", Value::u32(c.rope_dims()));
    // Multi-section RoPE: for text every section rotates by the same position, so the split
    // only needs to cover the rotated pairs (as the released models' [11, 11, 10, 0] of 32).
    const auto pairs = static_cast<int32_t>(c.rope_dims() / 2);
    w.set(a + "rope.dimension_sections", Value::i32s({pairs - 2 * (pairs / 3), pairs / 3, pairs / 3, 0}));
  }
  w.set("general.file_type", Value::u32(plan.file_type.id));
  w.set("general.quantization_version", Value::u32(2));
}

// Fills rows [row0, row1) of a tensor and converts them to its type. Each row has its own
// random stream, so the result does not depend on how rows are split between threads.
void make_rows(const PlannedTensor& t, uint64_t tensor_seed, uint64_t row0, uint64_t row1,
               const std::vector<float>& rope_factors, uint8_t* dst) {
  const uint64_t n = t.dims[0];
  const uint64_t row_bytes = *gguf::row_bytes(t.type, n);
  std::vector<float> row(n);
  for (uint64_t r = row0; r < row1; ++r) {
    NormalRng rng(tensor_seed, r);
    for (uint64_t i = 0; i < n; ++i) {
      switch (t.fill) {
        case Fill::Normal: row[i] = kWeightStd * rng.next(); break;
        case Fill::NearOne: row[i] = 1.0f + kWeightStd * rng.next(); break;
        case Fill::RopeFreqs: row[i] = rope_factors[i]; break;
        case Fill::Decay: row[i] = -std::exp(rng.next()); break;
      }
    }
    tensor::quantize_row(t.type, row.data(), dst + (r - row0) * row_bytes, static_cast<int64_t>(n));
  }
}

// The whole of a chat template file; empty when no path is given.
std::string read_chat_template(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read chat template " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) throw std::invalid_argument("chat template " + path + " is empty");
  return text;
}

}  // namespace

SynthReport synthesize(const SynthOptions& o) {
  o.config.validate();
  const WeightTypePlan plan = WeightTypePlan::from_name(o.type);
  const std::vector<PlannedTensor> tensors = plan_tensors(o.config, plan);
  const std::vector<float> rope_factors = o.config.rope_scaling ? llama3_rope_factors(o.config) : std::vector<float>{};
  const unsigned threads = std::max(1u, o.threads ? o.threads : std::thread::hardware_concurrency());
  const std::string chat_template = read_chat_template(o.chat_template_path);  // before the output exists

  const std::string tmp_path = o.out_path + ".partial";
  std::ofstream out(tmp_path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + tmp_path);
  gguf::Writer w(out);
  set_model_metadata(w, o, plan);
  for (auto& [key, value] : synth_vocab_metadata(o.tokenizer_json, o.config.n_vocab, chat_template))
    w.set(key, std::move(value));
  for (const auto& t : tensors) w.add_tensor(t.name, t.type, t.dims);
  w.write_header();

  SynthReport report;
  constexpr uint64_t kSliceBytes = 32 << 20;  // float rows generated per slice, across threads
  std::vector<uint8_t> buffer;
  for (size_t ti = 0; ti < tensors.size(); ++ti) {
    const PlannedTensor& t = tensors[ti];
    uint64_t n_rows = 1;  // every dimension past the row's
    for (size_t d = 1; d < t.dims.size(); ++d) n_rows *= t.dims[d];
    const uint64_t row_bytes = *gguf::row_bytes(t.type, t.dims[0]);
    const uint64_t slice_rows = std::max<uint64_t>(1, kSliceBytes / (t.dims[0] * sizeof(float)));
    const uint64_t tensor_seed = mix_seed(o.seed, t.name);
    for (uint64_t r0 = 0; r0 < n_rows; r0 += slice_rows) {
      const uint64_t r1 = std::min(n_rows, r0 + slice_rows);
      buffer.resize((r1 - r0) * row_bytes);
      const uint64_t per_thread = (r1 - r0 + threads - 1) / threads;
      std::vector<std::thread> pool;
      for (unsigned k = 0; k < threads; ++k) {
        const uint64_t a = r0 + k * per_thread, b = std::min(r1, a + per_thread);
        if (a >= b) break;
        pool.emplace_back(make_rows, std::cref(t), tensor_seed, a, b, std::cref(rope_factors),
                          buffer.data() + (a - r0) * row_bytes);
      }
      for (auto& th : pool) th.join();
      w.write_data(buffer);
    }
    report.n_params += t.dims[0] * n_rows;
    ++report.n_tensors;
  }
  w.finish();
  out.close();
  if (!out) throw std::runtime_error("write to " + tmp_path + " failed");
  std::filesystem::rename(tmp_path, o.out_path);
  report.file_bytes = std::filesystem::file_size(o.out_path);
  return report;
}

}  // namespace nanoserve::synth
