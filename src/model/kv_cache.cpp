#include "model/kv_cache.h"

#include <stdexcept>

namespace nanoserve::model {

KvCache::KvCache(const ModelConfig& c, int64_t n_ctx, int n_seq)
    : n_ctx_(n_ctx), n_layer_(static_cast<int>(c.n_layer)), kv_dim_(c.kv_dim()) {
  if (n_ctx <= 0 || n_seq <= 0) throw std::invalid_argument("KV cache: n_ctx and n_seq must be positive");
  length_.assign(n_seq, 0);
  const size_t n = static_cast<size_t>(n_seq) * n_layer_ * n_ctx_ * kv_dim_;
  k_.resize(n);
  v_.resize(n);
}

}  // namespace nanoserve::model
