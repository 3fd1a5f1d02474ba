// Loading a Model, and the checks and buffers around its forward pass (forward.cpp).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/attention.h"
#include "kernels/scratch.h"
#include "model/model.h"

namespace nanoserve::model {
namespace {

// The MTP block's input, [normed embedding | normed hidden state]: none without it.
int64_t mtp_width(const ModelConfig& c) { return c.mtp ? 2 * c.n_embd : 0; }

int default_threads(int requested) { return requested > 0 ? requested : kernels::ThreadPool::physical_cores(); }

int64_t widest_input(const ModelConfig& c) {
  return std::max<int64_t>({c.n_embd, c.n_ff, c.n_ff_expert, c.q_dim(), c.n_ff_shared, c.ssm_inner, mtp_width(c)});
}

// Wq's output with its gates, and the gates: none without gated_q.
int64_t gated_q_width(const ModelConfig& c, int times) { return c.features.gated_q ? times * c.q_dim() : 0; }

// The file's config with the MTP block if asked for and there, and the KV cache's type: the one
// asked for, else NANOSERVE_KV_TYPE's, else f16 (the variable lets a whole test run use another
// cache type: ctest -L kv-q8).
ModelConfig with_options(ModelConfig c, const ModelOptions& options) {
  const char* env = std::getenv("NANOSERVE_KV_TYPE");
  c.kv_type = options.kv_type ? *options.kv_type : env && *env ? kernels::parse_kv_type(env) : kernels::KvType::F16;
  c.mtp = options.mtp && c.n_nextn > 0;
  c.validate();
  return c;
}

// The dense feed-forward's width: none for a mixture of experts, whose files still write
// feed_forward_length (Qwen3-30B-A3B's would be a chunk's worth of unused buffers).
int64_t dense_ff(const ModelConfig& c) { return c.features.moe ? 0 : c.n_ff; }

// The sliding-window layers' RoPE angles: none for a model without them.
int64_t swa_rope_width(const ModelConfig& c) { return c.features.swa_own_rope ? c.rope_dims() / 2 : 0; }

}  // namespace

Model::Model(const std::string& path, ModelOptions options)
    : file_(gguf::File::open(path)),
      config_(with_options(from_gguf(file_), options)),
      weights_(bind_weights(file_, config_)),
      own_pool_(options.pool ? nullptr : std::make_unique<kernels::ThreadPool>(default_threads(options.threads))),
      pool_(options.pool ? *options.pool : *own_pool_),
      scratch_(pool_.size(), widest_input(config_)),
      ws_(config_) {
  if (config_.features.moe) moe_.emplace(config_);
  if (config_.n_recurrent_layers() > 0) delta_.emplace(config_);
  if (const auto& y = config_.rope_yarn)
    yarn_ = kernels::yarn_for(static_cast<int>(config_.rope_dims()), config_.rope_base, y->factor, y->original_context,
                              y->beta_fast, y->beta_slow);
  interleave_weights();
  set_context(config_.n_ctx_train);
}

int64_t Model::set_context(int64_t positions) {
  if (config_.features.position_embd && positions > config_.n_ctx_train)
    throw std::invalid_argument("a context of " + std::to_string(positions) + " positions: this " + config_.arch +
                                " model has learned embeddings for " + std::to_string(config_.n_ctx_train));
  rope_freqs_ = weights_.rope_freqs;
  if (weights_.rope_factors_short) {
    const bool beyond = config_.rope_original_context == 0 || positions > config_.rope_original_context;
    rope_freqs_ = beyond ? weights_.rope_factors_long : weights_.rope_factors_short;
  }
  return positions;
}

// Where this CPU's kernels read them faster, the matrices of the types that have an interleaved
// layout (quantized and float) are regrouped in place by 8 rows
// (tensor/interleave.h), in the process's own copy of the weights (File::make_private_writable:
// as much memory as the mapped pages it replaces); the file does not change.
void Model::interleave_weights() {
  if (!kernels::interleaving_pays()) return;
  std::vector<kernels::Matrix*> matrices = {&weights_.token_embd, &weights_.output};
  if (weights_.mtp.eh_proj.data)  // its embedding and output may be the model's: interleaved once
    for (kernels::Matrix* m : {&weights_.mtp.eh_proj, &weights_.mtp.embed, &weights_.mtp.head}) matrices.push_back(m);
  for (LayerWeights& l : weights_.layers) {
    for (kernels::Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down, &l.shared_gate, &l.shared_up,
                               &l.shared_down, &l.ssm_qkv, &l.ssm_z, &l.ssm_beta, &l.ssm_alpha, &l.ssm_out})
      if (m->data) matrices.push_back(m);
    for (auto* experts : {&l.expert_gate, &l.expert_up, &l.expert_down})
      for (kernels::Matrix& m : *experts) matrices.push_back(&m);
  }
  std::vector<const uint8_t*> done;  // a tied output shares token_embd's bytes
  for (kernels::Matrix* m : matrices) {
    if (!kernels::can_interleave(*m)) continue;
    if (std::find(done.begin(), done.end(), m->data) != done.end()) {
      m->interleaved = true;
      continue;
    }
    if (done.empty()) file_.make_private_writable();
    kernels::interleave_rows(*m, pool_);
    done.push_back(m->data);
  }
}

uint64_t Model::weight_bytes_per_token() const { return model::weight_bytes_per_token(weights_, config_); }

void Model::check(const Batch& batch, const KvCache& cache) {
  if (!cache.fits(config_)) throw std::invalid_argument("the KV cache was made for a model of another shape");
  std::vector<int64_t>& next = ws_.next_pos;  // per sequence: the position its next row must have
  next.resize(cache.n_seq());
  for (int s = 0; s < cache.n_seq(); ++s) next[s] = cache.length(s);
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchRow& row = batch.rows[i];
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument("batch row " + std::to_string(i) + ": " + what);
    };
    if (row.token < 0 || row.token >= static_cast<int64_t>(config_.n_vocab))
      fail("token " + std::to_string(row.token) + " is outside the vocabulary (" + std::to_string(config_.n_vocab) + ")");
    if (row.seq < 0 || row.seq >= cache.n_seq()) fail("sequence " + std::to_string(row.seq) + " has no cache");
    if (row.pos != next[row.seq])
      fail("position " + std::to_string(row.pos) + " does not continue sequence " + std::to_string(row.seq) +
           " (expected " + std::to_string(next[row.seq]) + ")");
    if (row.pos >= cache.n_ctx()) fail("position " + std::to_string(row.pos) + " is beyond the context size");
    if (config_.features.position_embd && row.pos >= config_.n_ctx_train)
      fail("position " + std::to_string(row.pos) + " has no learned embedding (context_length " +
           std::to_string(config_.n_ctx_train) + ")");
    ++next[row.seq];
  }
}

// Gives every sequence of the checked batch the blocks its rows need: all, or none and KvCacheFull.
void Model::reserve_kv(KvCache& cache) {
  const std::vector<int64_t>& next = ws_.next_pos;  // from check(): each sequence's length after the batch
  int64_t need = 0;
  for (int s = 0; s < cache.n_seq(); ++s) need += cache.blocks_needed(s, next[s]);
  if (need > cache.free_blocks())
    throw KvCacheFull("the KV cache has " + std::to_string(cache.free_blocks()) + " free blocks, the batch needs " +
                      std::to_string(need));
  for (int s = 0; s < cache.n_seq(); ++s) cache.reserve(s, next[s]);
}

Model::Workspace::Workspace(const ModelConfig& c)
    : x(c.n_embd), xn(c.n_embd), q(c.q_dim(), c.head_dim), q_and_gate(gated_q_width(c, 2)),
      q_gate(gated_q_width(c, 1)), k(c.kv_dim(), c.head_dim), v(c.kv_dim(), c.head_dim),
      attn(c.q_dim(), c.head_dim), gate(dense_ff(c)), up(dense_ff(c)), rope_cos(c.rope_dims() / 2),
      rope_sin(c.rope_dims() / 2), mtp_in(mtp_width(c)), rope_cos_swa(swa_rope_width(c)),
      rope_sin_swa(swa_rope_width(c)),
      group(c.n_head / c.n_head_kv), pass_rows(kernels::attention_rows_per_pass(static_cast<int>(group), c.kv_type)) {}

void Model::reserve(int64_t rows, int64_t n_ctx) {
  for (RowBuffer* b : {&ws_.x, &ws_.xn, &ws_.q, &ws_.q_and_gate, &ws_.q_gate, &ws_.k, &ws_.v, &ws_.attn, &ws_.gate,
                       &ws_.up, &ws_.rope_cos, &ws_.rope_sin, &ws_.mtp_in, &ws_.rope_cos_swa, &ws_.rope_sin_swa})
    b->reserve(rows);
  if (moe_) moe_->reserve(rows);
  if (delta_) delta_->reserve(rows);
  const ModelConfig& c = config_;
  kernels::grow(ws_.scores, static_cast<size_t>(pool_.size() * ws_.pass_heads() * n_ctx));
  kernels::grow(ws_.pass_q, static_cast<size_t>(pool_.size() * 2 * ws_.pass_heads() * c.head_dim));
}


}  // namespace nanoserve::model
