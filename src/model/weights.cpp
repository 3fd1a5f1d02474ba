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
    const gguf::TensorInfo& t = find(name, {n_in, n_out});
    try {
      kernels::act_type_for(t.type);
    } catch (const std::invalid_argument&) {
      throw std::runtime_error("model tensor " + name + " has unsupported type " + std::string(gguf::type_name(t.type)));
    }
    return {t.type, t.data, static_cast<int64_t>(n_in), static_cast<int64_t>(n_out), *gguf::row_bytes(t.type, n_in)};
  }

  // A 1-D F32 tensor of n values.
  const float* vector(const std::string& name, uint64_t n) const {
    const gguf::TensorInfo& t = find(name, {n});
    if (t.type != gguf::TensorType::F32)
      throw std::runtime_error("model tensor " + name + " has type " + std::string(gguf::type_name(t.type)) +
                               ", expected F32");
    if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0)
      throw std::runtime_error("model tensor " + name + " is not aligned");
    return reinterpret_cast<const float*>(t.data);
  }

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

 private:
  const gguf::File& file_;
};

}  // namespace

ModelWeights bind_weights(const gguf::File& file, const ModelConfig& c) {
  const Binder b(file);
  ModelWeights w;
  w.token_embd = b.matrix("token_embd.weight", c.n_embd, c.n_vocab);
  if (!tensor::can_dequantize(w.token_embd.type))
    throw std::runtime_error("model tensor token_embd.weight: rows of type " +
                             std::string(gguf::type_name(w.token_embd.type)) + " cannot be looked up");
  w.output = c.tied_output ? w.token_embd : b.matrix("output.weight", c.n_embd, c.n_vocab);
  w.output_norm = b.vector("output_norm.weight", c.n_embd);
  if (b.has("rope_freqs.weight")) w.rope_freqs = b.vector("rope_freqs.weight", c.rope_dims() / 2);
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm = b.vector(p + "attn_norm.weight", c.n_embd);
    l.wq = b.matrix(p + "attn_q.weight", c.n_embd, c.q_dim());
    l.wk = b.matrix(p + "attn_k.weight", c.n_embd, c.kv_dim());
    l.wv = b.matrix(p + "attn_v.weight", c.n_embd, c.kv_dim());
    if (c.has_qkv_bias()) {
      l.bq = b.vector(p + "attn_q.bias", c.q_dim());
      l.bk = b.vector(p + "attn_k.bias", c.kv_dim());
      l.bv = b.vector(p + "attn_v.bias", c.kv_dim());
    }
    if (c.has_qk_norm()) {
      l.q_norm = b.vector(p + "attn_q_norm.weight", c.head_dim);
      l.k_norm = b.vector(p + "attn_k_norm.weight", c.head_dim);
    }
    l.wo = b.matrix(p + "attn_output.weight", c.q_dim(), c.n_embd);
    l.ffn_norm = b.vector(p + "ffn_norm.weight", c.n_embd);
    l.w_gate = b.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff);
    l.w_up = b.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff);
    l.w_down = b.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd);
    w.layers.push_back(l);
  }
  return w;
}

}  // namespace nanoserve::model
