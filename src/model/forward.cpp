// The forward pass of Model (see model.h), in llama2.c's order: embed, then per layer an
// attention block and a feed-forward block, each pre-normed and added to the residual x.
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/norm.h"
#include "kernels/ops.h"
#include "kernels/rope.h"
#include "model/model.h"
#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Calls fn(r) for each row r < rows, split between the pool's threads for a prompt's hundreds
// of rows; a decode step's few rows stay on this thread (a dispatch would cost more than them).
template <class Fn>
void for_each_row(kernels::ThreadPool& pool, int64_t rows, Fn&& fn) {
  constexpr int64_t kRowsPerChunk = 16;
  pool.run(rows, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) fn(r);
  }, kRowsPerChunk);
}

}  // namespace

void Model::forward(const Batch& batch, KvCache& cache, Logits& logits) {
  check(batch, cache);
  reserve_kv(cache);
  const ModelConfig& c = config_;
  const int64_t rows = static_cast<int64_t>(batch.size());
  logits.n_vocab = c.n_vocab;
  logits.batch_rows.clear();
  if (rows == 0) return;
  reserve(rows, cache.n_ctx());
  clock_.start(profile_);

  for (int64_t r = 0; r < rows; ++r) {
    const kernels::Matrix& e = weights_.token_embd;
    const uint8_t* row = kernels::weight_row(e, batch.rows[r].token, scratch_.row(0));  // on this thread only
    tensor::dequantize_row(e.type, row, ws_.x.data() + r * c.n_embd, c.n_embd);
    const int64_t half = c.rope_dims() / 2;
    kernels::rope_angles(batch.rows[r].pos, static_cast<int>(c.rope_dims()), c.rope_base, weights_.rope_freqs,
                         ws_.rope_cos.data() + r * half, ws_.rope_sin.data() + r * half);
  }
  clock_.mark(Op::kEmbed);

  int64_t live = rows;  // rows still carried through the layers
  for (uint32_t l = 0; l < c.n_layer; ++l) {
    attention_block(static_cast<int>(l), batch, cache);
    // Only the rows that want logits need the last feed-forward block (llama.cpp does the same).
    if (l + 1 == c.n_layer) live = keep_logit_rows(batch, logits);
    if (live == 0) break;
    ffn_block(static_cast<int>(l), live);
  }
  for (const BatchRow& row : batch.rows) cache.set_length(row.seq, row.pos + 1);
  if (live == 0) return;

  for (int64_t r = 0; r < live; ++r)
    kernels::rms_norm(ws_.x.data() + r * c.n_embd, weights_.output_norm, ws_.xn.data() + r * c.n_embd, c.n_embd,
                      c.rms_eps);
  clock_.mark(Op::kNorm);
  acts_.set(ws_.xn.data(), live, c.n_embd, c.n_embd);
  grow(logits.values, static_cast<size_t>(live) * c.n_vocab);
  kernels::matmul(weights_.output, acts_, logits.values.data(), c.n_vocab, pool_, scratch_);
  clock_.mark(Op::kOutput, static_cast<double>(weights_.output.bytes()));
}

void Model::attention_block(int layer, const Batch& batch, KvCache& cache) {
  const ModelConfig& c = config_;
  const LayerWeights& w = weights_.layers[layer];
  const int64_t rows = static_cast<int64_t>(batch.size());
  const int64_t hd = c.head_dim, q_dim = c.q_dim(), kv_dim = c.kv_dim(), half = c.rope_dims() / 2;

  for_each_row(pool_, rows, [&](int64_t r) {
    kernels::rms_norm(ws_.x.data() + r * c.n_embd, w.attn_norm, ws_.xn.data() + r * c.n_embd, c.n_embd, c.rms_eps);
  });
  clock_.mark(Op::kNorm);
  acts_.set(ws_.xn.data(), rows, c.n_embd, c.n_embd);
  kernels::matmul_many({{&w.wq, ws_.q.data(), q_dim}, {&w.wk, ws_.k.data(), kv_dim}, {&w.wv, ws_.v.data(), kv_dim}},
                       acts_, pool_, scratch_);
  clock_.mark(Op::kQkv, static_cast<double>(w.wq.bytes() + w.wk.bytes() + w.wv.bytes()));

  const kernels::RopeStyle style = c.rope_halves() ? kernels::RopeStyle::Halves : kernels::RopeStyle::Adjacent;
  // Each row's biases, norms and rotation, and its keys and values into the cache (its own
  // position: rows never share a slot).
  for_each_row(pool_, rows, [&](int64_t r) {
    float* q = ws_.q.data() + r * q_dim;
    float* k = ws_.k.data() + r * kv_dim;
    float* v = ws_.v.data() + r * kv_dim;
    if (w.bq) {
      kernels::add(q, w.bq, q_dim);
      kernels::add(k, w.bk, kv_dim);
      kernels::add(v, w.bv, kv_dim);
    }
    if (w.q_norm) {
      for (int64_t h = 0; h < c.n_head; ++h) kernels::rms_norm(q + h * hd, w.q_norm, q + h * hd, hd, c.rms_eps);
      for (int64_t h = 0; h < c.n_head_kv; ++h) kernels::rms_norm(k + h * hd, w.k_norm, k + h * hd, hd, c.rms_eps);
    }
    const float* cos = ws_.rope_cos.data() + r * half;
    const float* sin = ws_.rope_sin.data() + r * half;
    kernels::rope_apply(q, static_cast<int>(c.n_head), static_cast<int>(hd), static_cast<int>(c.rope_dims()), style,
                        cos, sin);
    kernels::rope_apply(k, static_cast<int>(c.n_head_kv), static_cast<int>(hd), static_cast<int>(c.rope_dims()),
                        style, cos, sin);
    cache.store(batch.rows[r].seq, layer, batch.rows[r].pos, k, v);
  });
  clock_.mark(Op::kRopeKv);

  // Each row's query heads attend to its sequence's positions up to its own (causal), in
  // groups that share a KV head (GQA).
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t group = c.n_head / c.n_head_kv;  // query heads per KV head
  const int64_t scores_per_thread = group * cache.n_ctx();
  pool_.run(rows * c.n_head_kv, [&](int64_t t0, int64_t t1, int thread) {
    float* scores = ws_.scores.data() + thread * scores_per_thread;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r = t / c.n_head_kv, g = t % c.n_head_kv;
      const BatchRow& row = batch.rows[r];
      kernels::attention_heads(ws_.q.data() + r * q_dim + g * group * hd, static_cast<int>(group),
                               cache.view(row.seq, layer), static_cast<int>(g), static_cast<int>(hd), row.pos + 1,
                               scale, scores, ws_.attn.data() + r * q_dim + g * group * hd);
    }
  });
  if (profile_) {  // each row reads the keys and values of its positions up to its own
    double positions = 0.0;
    for (const BatchRow& row : batch.rows) positions += static_cast<double>(row.pos + 1);
    clock_.mark(Op::kAttention, positions * 2.0 * static_cast<double>(kv_dim) * sizeof(uint16_t));
  }

  acts_.set(ws_.attn.data(), rows, q_dim, q_dim);
  kernels::matmul(w.wo, acts_, ws_.xn.data(), c.n_embd, pool_, scratch_);
  kernels::add(ws_.x.data(), ws_.xn.data(), rows * c.n_embd);
  clock_.mark(Op::kWo, static_cast<double>(w.wo.bytes()));
}

void Model::ffn_block(int layer, int64_t rows) {
  const ModelConfig& c = config_;
  const LayerWeights& w = weights_.layers[layer];
  for_each_row(pool_, rows, [&](int64_t r) {
    kernels::rms_norm(ws_.x.data() + r * c.n_embd, w.ffn_norm, ws_.xn.data() + r * c.n_embd, c.n_embd, c.rms_eps);
  });
  clock_.mark(Op::kNorm);
  acts_.set(ws_.xn.data(), rows, c.n_embd, c.n_embd);
  kernels::matmul_many({{&w.w_gate, ws_.gate.data(), c.n_ff}, {&w.w_up, ws_.up.data(), c.n_ff}}, acts_, pool_,
                       scratch_);
  clock_.mark(Op::kGateUp, static_cast<double>(w.w_gate.bytes() + w.w_up.bytes()));
  pool_.run(rows, [&](int64_t r0, int64_t r1, int) {
    kernels::silu_mul(ws_.gate.data() + r0 * c.n_ff, ws_.up.data() + r0 * c.n_ff, ws_.gate.data() + r0 * c.n_ff,
                      (r1 - r0) * c.n_ff);
  });
  clock_.mark(Op::kSiluMul);
  acts_.set(ws_.gate.data(), rows, c.n_ff, c.n_ff);
  kernels::matmul(w.w_down, acts_, ws_.xn.data(), c.n_embd, pool_, scratch_);
  kernels::add(ws_.x.data(), ws_.xn.data(), rows * c.n_embd);
  clock_.mark(Op::kDown, static_cast<double>(w.w_down.bytes()));
}

// Moves the residual rows that want logits to the front, in batch order; returns how many.
int64_t Model::keep_logit_rows(const Batch& batch, Logits& logits) {
  const int64_t n = config_.n_embd;
  int64_t kept = 0;
  for (size_t r = 0; r < batch.size(); ++r) {
    if (!batch.rows[r].logits) continue;
    if (kept != static_cast<int64_t>(r))
      std::memcpy(ws_.x.data() + kept * n, ws_.x.data() + r * n, n * sizeof(float));
    logits.batch_rows.push_back(static_cast<int32_t>(r));
    ++kept;
  }
  return kept;
}

}  // namespace nanoserve::model
