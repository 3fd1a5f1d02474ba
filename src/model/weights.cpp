#include "model/weights.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/activations.h"
#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

class Binder {
 public:
  explicit Binder(const gguf::File& file) : file_(file) {}

  const gguf::TensorInfo& find(const std::string& name, const std::vector<uint64_t>& dims) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (!t) throw std::runtime_error("model tensor " + name + " is missing");
    if (t->dims != dims)
      throw std::runtime_error("model tensor " + name + " has shape " + shape_text(t->dims) + ", expected " +
                               shape_text(dims));
    return *t;
  }

  // A matrix of n_out rows of n_in, in a type matmul supports.
  kernels::Matrix matrix(const std::string& name, uint64_t n_in, uint64_t n_out) const {
    return matrix_of(name, find(name, {n_in, n_out}), n_in, n_out);
  }

  // The first n_out rows of n_in of tensor t, in a type matmul supports.
  static kernels::Matrix matrix_of(const std::string& name, const gguf::TensorInfo& t, uint64_t n_in, uint64_t n_out) {
    try {
      kernels::act_type_for(t.type);
    } catch (const std::invalid_argument&) {
      throw std::runtime_error("model tensor " + name + " has type " + std::string(gguf::type_name(t.type)) +
                               ", which nanoserve does not support yet");
    }
    return {t.type, t.data, static_cast<int64_t>(n_in), static_cast<int64_t>(n_out), *gguf::row_bytes(t.type, n_in)};
  }

  // A 1-D F32 tensor of n values.
  const float* vector(const std::string& name, uint64_t n) const { return floats(name, {n}); }

  // An F32 tensor of these dimensions.
  const float* floats(const std::string& name, const std::vector<uint64_t>& dims) const {
    const gguf::TensorInfo& t = find(name, dims);
    if (t.type != gguf::TensorType::F32)
      throw std::runtime_error("model tensor " + name + " has type " + std::string(gguf::type_name(t.type)) +
                               ", expected F32");
    if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0)
      throw std::runtime_error("model tensor " + name + " is not aligned");
    return reinterpret_cast<const float*>(t.data);
  }

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

  // The n_mat matrices of n_out rows of n_in stored one after another in the 3-D tensor `name`
  // ([n_in, n_out, n_mat]): a view of each.
  std::vector<kernels::Matrix> stack(const std::string& name, uint64_t n_in, uint64_t n_out, uint64_t n_mat) const {
    const gguf::TensorInfo& t = find(name, {n_in, n_out, n_mat});
    const kernels::Matrix first = matrix_of(name, t, n_in, n_out);
    std::vector<kernels::Matrix> views(n_mat, first);
    for (uint64_t e = 0; e < n_mat; ++e) views[e].data = first.data + e * first.bytes();
    return views;
  }

  // The matrices stored one after another, by rows, in the one tensor `name` (n_in × the sum
  // of n_outs): a view of each one's rows.
  std::vector<kernels::Matrix> split(const std::string& name, uint64_t n_in, const std::vector<uint64_t>& n_outs) const {
    uint64_t total = 0;
    for (uint64_t n : n_outs) total += n;
    const kernels::Matrix whole = matrix(name, n_in, total);
    std::vector<kernels::Matrix> parts;
    uint64_t first = 0;
    for (uint64_t n : n_outs) {
      parts.push_back({whole.type, whole.data + first * whole.row_bytes, whole.n_in, static_cast<int64_t>(n),
                       whole.row_bytes});
      first += n;
    }
    return parts;
  }

 private:
  const gguf::File& file_;
};

// An attention layer's projections, their biases and norms.
void bind_attention(const Binder& b, const std::string& p, const ModelConfig& c, LayerWeights& l) {
  const ArchFeatures& f = c.features;
  if (f.fused_qkv) {
    const auto qkv = b.split(p + "attn_qkv.weight", c.n_embd, {c.q_dim(), c.kv_dim(), c.kv_dim()});
    l.wq = qkv[0], l.wk = qkv[1], l.wv = qkv[2];
  } else {
    l.wq = b.matrix(p + "attn_q.weight", c.n_embd, (f.gated_q ? 2 : 1) * c.q_dim());
    l.wk = b.matrix(p + "attn_k.weight", c.n_embd, c.kv_dim());
    l.wv = b.matrix(p + "attn_v.weight", c.n_embd, c.kv_dim());
  }
  if (f.qkv_bias && f.fused_qkv) {
    l.bq = b.vector(p + "attn_qkv.bias", c.q_dim() + 2 * c.kv_dim());
    l.bk = l.bq + c.q_dim();
    l.bv = l.bk + c.kv_dim();
  } else if (f.qkv_bias) {
    l.bq = b.vector(p + "attn_q.bias", c.q_dim());
    l.bk = b.vector(p + "attn_k.bias", c.kv_dim());
    l.bv = b.vector(p + "attn_v.bias", c.kv_dim());
  }
  if (f.qk_norm) {
    l.q_norm = b.vector(p + "attn_q_norm.weight", c.head_dim);
    l.k_norm = b.vector(p + "attn_k_norm.weight", c.head_dim);
  }
  l.wo = b.matrix(p + "attn_output.weight", c.q_dim(), c.n_embd);
  if (f.attn_sinks) l.attn_sinks = b.vector(p + "attn_sinks.weight", c.n_head);
}

// A delta-net layer's tensors (ModelConfig::recurrent).
void bind_delta_net(const Binder& b, const std::string& p, const ModelConfig& c, LayerWeights& l) {
  const uint32_t channels = c.ssm_conv_channels(), heads = c.ssm_value_heads;
  l.ssm_qkv = b.matrix(p + "attn_qkv.weight", c.n_embd, channels);
  l.ssm_z = b.matrix(p + "attn_gate.weight", c.n_embd, c.ssm_inner);
  const gguf::TensorInfo& conv = b.find(p + "ssm_conv1d.weight", {c.ssm_conv_kernel, channels});
  if (conv.type != gguf::TensorType::F32)
    throw std::runtime_error("model tensor " + p + "ssm_conv1d.weight has type " +
                             std::string(gguf::type_name(conv.type)) + ", expected F32");
  l.ssm_conv = reinterpret_cast<const float*>(conv.data);
  l.ssm_a = b.vector(p + "ssm_a", heads);
  l.ssm_dt_bias = b.vector(p + "ssm_dt.bias", heads);
  l.ssm_beta = b.matrix(p + "ssm_beta.weight", c.n_embd, heads);
  l.ssm_alpha = b.matrix(p + "ssm_alpha.weight", c.n_embd, heads);
  l.ssm_norm = b.vector(p + "ssm_norm.weight", c.ssm_head_dim);
  l.ssm_out = b.matrix(p + "ssm_out.weight", c.ssm_inner, c.n_embd);
}

}  // namespace

ModelWeights bind_weights(const gguf::File& file, const ModelConfig& c) {
  const Binder b(file);
  ModelWeights w;
  w.token_embd = b.matrix("token_embd.weight", c.n_embd, c.n_vocab);
  if (!tensor::can_dequantize(w.token_embd.type))
    throw std::runtime_error("model tensor token_embd.weight: rows of type " +
                             std::string(gguf::type_name(w.token_embd.type)) + " cannot be looked up");
  w.output = c.tied_output ? w.token_embd : b.matrix("output.weight", c.n_embd, c.n_vocab);
  const ArchFeatures& f = c.features;
  const bool layer_norm = f.norm == ArchFeatures::Norm::Layer;
  w.output_norm = b.vector("output_norm.weight", c.n_embd);
  if (layer_norm) w.output_norm_b = b.vector("output_norm.bias", c.n_embd);
  if (f.position_embd) {
    const gguf::TensorInfo& t = b.find("position_embd.weight", {c.n_embd, c.n_ctx_train});
    if (t.type != gguf::TensorType::F32)
      throw std::runtime_error("model tensor position_embd.weight has type " + std::string(gguf::type_name(t.type)) +
                               ", expected F32");
    w.position_embd = reinterpret_cast<const float*>(t.data);
  }
  if (b.has("rope_freqs.weight")) w.rope_freqs = b.vector("rope_freqs.weight", c.rope_dims() / 2);
  if (b.has("rope_factors_short.weight") || b.has("rope_factors_long.weight")) {
    w.rope_factors_short = b.vector("rope_factors_short.weight", c.rope_dims() / 2);
    w.rope_factors_long = b.vector("rope_factors_long.weight", c.rope_dims() / 2);
  }
  for (uint32_t i = 0; i < c.n_cache_layers(); ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm = b.vector(p + "attn_norm.weight", c.n_embd);
    if (layer_norm) l.attn_norm_b = b.vector(p + "attn_norm.bias", c.n_embd);
    if (c.recurrent(i))
      bind_delta_net(b, p, c, l);
    else
      bind_attention(b, p, c, l);
    l.ffn_norm =
        b.vector(p + (f.ffn_norm_named_post_attention ? "post_attention_norm.weight" : "ffn_norm.weight"), c.n_embd);
    if (layer_norm) l.ffn_norm_b = b.vector(p + "ffn_norm.bias", c.n_embd);
    if (f.post_norms) {
      l.post_attn_norm = b.vector(p + "post_attention_norm.weight", c.n_embd);
      l.post_ffn_norm = b.vector(p + "post_ffw_norm.weight", c.n_embd);
    }
    if (f.projection_bias || f.attn_output_bias) l.bo = b.vector(p + "attn_output.bias", c.n_embd);
    if (f.projection_bias) {
      l.b_up = b.vector(p + "ffn_up.bias", c.n_ff);
      l.b_down = b.vector(p + "ffn_down.bias", c.n_embd);
    }
    if (f.moe) {
      l.router = b.matrix(p + "ffn_gate_inp.weight", c.n_embd, c.n_expert);
      l.expert_gate = b.stack(p + "ffn_gate_exps.weight", c.n_embd, c.n_ff_expert, c.n_expert);
      l.expert_up = b.stack(p + "ffn_up_exps.weight", c.n_embd, c.n_ff_expert, c.n_expert);
      l.expert_down = b.stack(p + "ffn_down_exps.weight", c.n_ff_expert, c.n_embd, c.n_expert);
      if (f.expert_bias) {
        l.router_b = b.vector(p + "ffn_gate_inp.bias", c.n_expert);
        l.expert_gate_b = b.floats(p + "ffn_gate_exps.bias", {c.n_ff_expert, c.n_expert});
        l.expert_up_b = b.floats(p + "ffn_up_exps.bias", {c.n_ff_expert, c.n_expert});
        l.expert_down_b = b.floats(p + "ffn_down_exps.bias", {c.n_embd, c.n_expert});
      }
      if (f.shared_expert) {
        l.shared_gate = b.matrix(p + "ffn_gate_shexp.weight", c.n_embd, c.n_ff_shared);
        l.shared_up = b.matrix(p + "ffn_up_shexp.weight", c.n_embd, c.n_ff_shared);
        l.shared_down = b.matrix(p + "ffn_down_shexp.weight", c.n_ff_shared, c.n_embd);
        l.shared_gate_inp = b.vector(p + "ffn_gate_inp_shexp.weight", c.n_embd);
      }
    } else if (f.ffn == ArchFeatures::Ffn::Gelu) {
      l.w_up = b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff);  // no gate
    } else if (f.fused_gate_up) {
      const auto gate_up = b.split(p + "ffn_up.weight", c.n_embd, {c.n_ff, c.n_ff});
      l.w_gate = gate_up[0], l.w_up = gate_up[1];
    } else {
      l.w_gate = b.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff);
      l.w_up = b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff);
    }
    if (!f.moe) l.w_down = b.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd);
    w.layers.push_back(l);
  }
  if (c.mtp) {
    const std::string p = "blk." + std::to_string(c.n_layer) + ".nextn.";
    w.mtp = {.eh_proj = b.matrix(p + "eh_proj.weight", 2 * c.n_embd, c.n_embd),
             .enorm = b.vector(p + "enorm.weight", c.n_embd),
             .hnorm = b.vector(p + "hnorm.weight", c.n_embd),
             .embed = b.has(p + "embed_tokens.weight") ? b.matrix(p + "embed_tokens.weight", c.n_embd, c.n_vocab)
                                                        : w.token_embd,
             .head_norm = b.has(p + "shared_head_norm.weight") ? b.vector(p + "shared_head_norm.weight", c.n_embd)
                                                                : w.output_norm,
             .head = b.has(p + "shared_head_head.weight") ? b.matrix(p + "shared_head_head.weight", c.n_embd, c.n_vocab)
                                                           : w.output};
    if (!tensor::can_dequantize(w.mtp.embed.type))
      throw std::runtime_error("model tensor " + p + "embed_tokens.weight: rows of its type cannot be looked up");
  }
  return w;
}

uint64_t weight_bytes_per_token(const ModelWeights& weights, const ModelConfig& c) {
  uint64_t total = weights.output.bytes() + weights.token_embd.row_bytes + c.n_embd * sizeof(float);
  for (uint32_t i = 0; i < c.n_layer; ++i) {  // the model's own layers: the MTP block's are a drafter's
    const LayerWeights& l = weights.layers[i];
    total += l.wq.bytes() + l.wk.bytes() + l.wv.bytes() + l.wo.bytes() + l.w_gate.bytes() + l.w_up.bytes() +
             l.w_down.bytes() + l.shared_gate.bytes() + l.shared_up.bytes() + l.shared_down.bytes();
    total += l.ssm_qkv.bytes() + l.ssm_z.bytes() + l.ssm_beta.bytes() + l.ssm_alpha.bytes() + l.ssm_out.bytes();
    // A mixture of experts: the router, and the experts one row uses.
    if (!l.expert_gate.empty())
      total += l.router.bytes() + c.n_expert_used * (l.expert_gate[0].bytes() + l.expert_up[0].bytes() +
                                                     l.expert_down[0].bytes());
    total += 2 * c.n_embd * sizeof(float);  // the two norms
  }
  return total;
}

}  // namespace nanoserve::model
