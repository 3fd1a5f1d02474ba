#include "lab/model_facts.h"

#include "gguf/file.h"
#include "model/config.h"

namespace nanoserve::lab {

ModelFacts read_model_facts(const std::string& path, const std::string& kv_type) {
  ModelFacts f;
  f.model = bench::inspect_model(path);
  const model::ModelConfig c = model::from_gguf(gguf::File::open(path));
  f.n_layer = c.n_layer;
  f.kv_layers = c.n_layer - c.n_windowed_layers();
  f.n_head_kv = c.n_head_kv;
  f.head_dim = c.head_dim;
  f.context_length = c.n_ctx_train;
  f.kv_type = kernels::parse_kv_type(kv_type);
  f.kv_value_bytes = static_cast<double>(kernels::kv_position_bytes(f.kv_type, f.head_dim)) / static_cast<double>(f.head_dim);
  return f;
}

}  // namespace nanoserve::lab
