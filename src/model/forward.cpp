// The forward pass of Model (see model.h), in llama2.c's order: embed, then per layer an
// attention block and a feed-forward block, each pre-normed and added to the residual x.
// Every step is one op of the profile (op_profile.h), timed by the scope it opens.
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/gelu.h"
#include "kernels/norm.h"
#include "kernels/ops.h"
#include "kernels/rope.h"
#include "kernels/scratch.h"
#include "model/model.h"
#include "tensor/quant.h"

namespace nanoserve::model {
namespace {

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

  embed(batch, weights_.token_embd);
  if (delta_) group_rows_by_sequence(batch);
  int64_t live = rows;  // rows still carried through the layers
  for (uint32_t l = 0; l < c.n_layer; ++l) {
    if (c.recurrent(l))
      delta_net_block(static_cast<int>(l), batch, cache);
    else
      attention_block(static_cast<int>(l), batch, cache);
    // Only the rows that want logits need the last feed-forward block (llama.cpp does the same),
    // unless the MTP block reads every row's hidden state.
    if (l + 1 == c.n_layer && !c.mtp) live = keep_logit_rows(batch, logits);
    if (live == 0) break;
    ffn_block(static_cast<int>(l), live);
  }
  if (c.mtp) {  // the block reads every row's hidden state after the output norm
    norm_rows(weights_.output_norm, weights_.output_norm_b, rows);
    logits.hidden.assign(ws_.xn.data(), ws_.xn.data() + rows * c.n_embd);
    live = keep_logit_rows(batch, logits);
  }
  for (const BatchRow& row : batch.rows) cache.set_length(row.seq, row.pos + 1);
  if (RecurrentStates* states = cache.recurrent_states())  // every layer's copy is taken now
    for (const BatchRow& row : batch.rows)
      if (states->capture_position(row.seq) == row.pos + 1) states->mark_captured(row.seq);
  if (live == 0) return;
  norm_rows(weights_.output_norm, weights_.output_norm_b, live);
  output_logits(live, weights_.output, logits);
}

// x = table[token] per row (the token embedding; times √n_embd where the family scales it), and
// each row's RoPE angles at its position (YaRN's where the model has it; for sliding-window layers
// too, where their base differs); or, with learned positions, x += position_embd[pos].
void Model::embed(const Batch& batch, const kernels::Matrix& table) {
  const auto timed = clock_.time(Op::kEmbed);
  const ModelConfig& c = config_;
  const kernels::Matrix& e = table;
  const int n_rot = static_cast<int>(c.rope_dims());
  const bool local = c.features.swa_own_rope, embed_scale = c.features.embed_scale;
  const bool position_embd = c.features.position_embd;
  for (size_t r = 0; r < batch.size(); ++r) {
    const int64_t pos = batch.rows[r].pos;
    const uint8_t* row = kernels::weight_row(e, batch.rows[r].token, scratch_.row(0));  // on this thread only
    tensor::dequantize_row(e.type, row, ws_.x.row(r), c.n_embd);
    if (embed_scale) kernels::scale(ws_.x.row(r), std::sqrt(static_cast<float>(c.n_embd)), c.n_embd);
    if (position_embd) {  // learned positions instead of rotations
      kernels::add(ws_.x.row(r), weights_.position_embd + pos * c.n_embd, c.n_embd);
      continue;
    }
    float *cos = ws_.rope_cos.row(r), *sin = ws_.rope_sin.row(r);
    if (yarn_)
      kernels::rope_angles_yarn(pos, n_rot, c.rope_base, *yarn_, cos, sin);
    else
      kernels::rope_angles(pos, n_rot, c.rope_base, rope_freqs_, cos, sin, c.rope_freq_scale);
    // LongRoPE scales the rotated dimensions of q and k too (a factor of 1 elsewhere: exact).
    for (int i = 0; i < n_rot / 2; ++i) {
      cos[i] *= c.rope_attn_factor;
      sin[i] *= c.rope_attn_factor;
    }
    if (local)
      kernels::rope_angles(pos, n_rot, c.rope_base_swa, nullptr, ws_.rope_cos_swa.row(r), ws_.rope_sin_swa.row(r));
  }
}

// x += Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x))
// (gated_q: attention's output times sigmoid(gate), the gate from Wq's rows beside q's)
void Model::attention_block(int layer, const Batch& batch, KvCache& cache) {
  const LayerWeights& w = weights_.layers[layer];
  const auto rows = static_cast<int64_t>(batch.size());
  const bool gated = config_.features.gated_q;
  norm_rows(w.attn_norm, w.attn_norm_b, rows);
  {
    const auto timed = clock_.time(Op::kQkv, static_cast<double>(w.wq.bytes() + w.wk.bytes() + w.wv.bytes()));
    acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
    RowBuffer& q = gated ? ws_.q_and_gate : ws_.q;
    kernels::matmul_many({{&w.wq, q.data(), q.width()},
                          {&w.wk, ws_.k.data(), ws_.k.width()},
                          {&w.wv, ws_.v.data(), ws_.v.width()}},
                         acts_, pool_, scratch_);
    if (gated) split_gated_q(rows);
  }
  position_and_store(w, layer, batch, cache);
  attend(layer, batch, cache);
  if (gated) gate_attention(rows);
  project_add(w.wo, w.bo, w.post_attn_norm, ws_.attn, rows, Op::kWo);
}

// Wq's rows per head are head_dim of q, then head_dim of its gate.
void Model::split_gated_q(int64_t rows) {
  const int64_t d = config_.head_dim;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < config_.n_head; ++h) {
      const float* from = ws_.q_and_gate.row(r) + 2 * h * d;
      std::memcpy(ws_.q.row(r) + h * d, from, d * sizeof(float));
      std::memcpy(ws_.q_gate.row(r) + h * d, from + d, d * sizeof(float));
    }
}

void Model::gate_attention(int64_t rows) {
  const int64_t n = config_.q_dim();
  for (int64_t r = 0; r < rows; ++r) {
    float* o = ws_.attn.row(r);
    const float* g = ws_.q_gate.row(r);
    for (int64_t i = 0; i < n; ++i) o[i] *= kernels::sigmoid(g[i]);
  }
}

// x += Wdown · (silu(Wgate · norm(x)) * (Wup · norm(x)))       (Ffn::SiluGated)
// x += Wdown · gelu(Wup · norm(x) + b_up) + b_down               (Ffn::Gelu; the biases where present)
// x += post_norm(Wdown · (gelu(Wgate · norm(x)) * (Wup · norm(x))))   (Ffn::GeluGated, post_norms)
// or a mixture of experts (moe.cpp)
void Model::ffn_block(int layer, int64_t rows) {
  const LayerWeights& w = weights_.layers[layer];
  norm_rows(w.ffn_norm, w.ffn_norm_b, rows);
  if (config_.features.moe) return moe_ffn(layer, rows);
  const ArchFeatures::Ffn ffn = config_.features.ffn;
  {
    const auto timed = clock_.time(Op::kGateUp, static_cast<double>(w.w_gate.bytes() + w.w_up.bytes()));
    acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
    if (ffn == ArchFeatures::Ffn::Gelu)
      kernels::matmul(w.w_up, acts_, ws_.gate.data(), ws_.gate.width(), pool_, scratch_);
    else
      kernels::matmul_many({{&w.w_gate, ws_.gate.data(), ws_.gate.width()}, {&w.w_up, ws_.up.data(), ws_.up.width()}},
                           acts_, pool_, scratch_);
  }
  {
    const auto timed = clock_.time(Op::kSiluMul);
    pool_.run(rows, [&](int64_t r0, int64_t r1, int) {
      const int64_t n = (r1 - r0) * ws_.gate.width();
      switch (ffn) {
        case ArchFeatures::Ffn::SiluGated:
          return kernels::silu_mul(ws_.gate.row(r0), ws_.up.row(r0), ws_.gate.row(r0), n);
        case ArchFeatures::Ffn::GeluGated:
          return kernels::gelu_mul(ws_.gate.row(r0), ws_.up.row(r0), ws_.gate.row(r0), n);
        case ArchFeatures::Ffn::SwigluClamped:
          return kernels::swiglu_clamped(ws_.gate.row(r0), ws_.up.row(r0), ws_.gate.row(r0), n,
                                         ArchFeatures::kSwigluAlpha, ArchFeatures::kSwigluLimit);
        case ArchFeatures::Ffn::Gelu:
          if (w.b_up)
            for (int64_t r = r0; r < r1; ++r) kernels::add(ws_.gate.row(r), w.b_up, ws_.gate.width());
          return kernels::gelu(ws_.gate.row(r0), ws_.gate.row(r0), n);
      }
    });
  }
  project_add(w.w_down, w.b_down, w.post_ffn_norm, ws_.gate, rows, Op::kDown);
}

// xn = norm(x) per row: rms_norm(x) · weight, or (Norm::Layer) layer_norm(x) · weight + bias.
void Model::norm_rows(const float* weight, const float* bias, int64_t rows) {
  const auto timed = clock_.time(Op::kNorm);
  const bool layer_norm = config_.features.norm == ArchFeatures::Norm::Layer;
  for_each_row(pool_, rows, [&](int64_t r) {
    if (layer_norm)
      kernels::layer_norm(ws_.x.row(r), weight, bias, ws_.xn.row(r), config_.n_embd, config_.rms_eps);
    else
      kernels::rms_norm(ws_.x.row(r), weight, ws_.xn.row(r), config_.n_embd, config_.rms_eps);
  });
}

// x += post_norm(w · in + bias) (through xn; the bias and the norm where the family has them),
// for the rows of `in`.
void Model::project_add(const kernels::Matrix& w, const float* bias, const float* post_norm, RowBuffer& in,
                        int64_t rows, Op op) {
  const auto timed = clock_.time(op, static_cast<double>(w.bytes()));
  acts_.set(in.data(), rows, in.width(), in.width());
  kernels::matmul(w, acts_, ws_.xn.data(), config_.n_embd, pool_, scratch_);
  for (int64_t r = 0; r < rows; ++r) {
    if (bias) kernels::add(ws_.xn.row(r), bias, config_.n_embd);
    if (post_norm) kernels::rms_norm(ws_.xn.row(r), post_norm, ws_.xn.row(r), config_.n_embd, config_.rms_eps);
  }
  kernels::add(ws_.x.data(), ws_.xn.data(), rows * config_.n_embd);
}

// Each row's q and k get their biases and head norms (where the family has them) and their
// rotation; its keys and values go into the cache at its own position (rows never share one).
void Model::position_and_store(const LayerWeights& w, int layer, const Batch& batch, KvCache& cache) {
  const auto timed = clock_.time(Op::kRopeKv);
  const ModelConfig& c = config_;
  const auto hd = static_cast<int>(c.head_dim), n_rot = static_cast<int>(c.rope_dims());
  // The layer's choices, made once here rather than for every row.
  const bool qkv_bias = c.features.qkv_bias, qk_norm = c.features.qk_norm, rotate = !c.features.position_embd;
  const kernels::RopeStyle style = c.features.rope_style;
  const bool local = c.features.swa_own_rope && c.is_local(static_cast<uint32_t>(layer));
  const RowBuffer& cos_rows = local ? ws_.rope_cos_swa : ws_.rope_cos;
  const RowBuffer& sin_rows = local ? ws_.rope_sin_swa : ws_.rope_sin;
  for_each_row(pool_, static_cast<int64_t>(batch.size()), [&](int64_t r) {
    float *q = ws_.q.row(r), *k = ws_.k.row(r), *v = ws_.v.row(r);
    if (qkv_bias) {
      kernels::add(q, w.bq, ws_.q.width());
      kernels::add(k, w.bk, ws_.k.width());
      kernels::add(v, w.bv, ws_.v.width());
    }
    if (qk_norm) {
      for (int64_t h = 0; h < c.n_head; ++h) kernels::rms_norm(ws_.q.head(r, h), w.q_norm, ws_.q.head(r, h), hd, c.rms_eps);
      for (int64_t h = 0; h < c.n_head_kv; ++h)
        kernels::rms_norm(ws_.k.head(r, h), w.k_norm, ws_.k.head(r, h), hd, c.rms_eps);
    }
    if (rotate) {
      const float *cos = cos_rows.row(r), *sin = sin_rows.row(r);
      kernels::rope_apply(q, static_cast<int>(c.n_head), hd, n_rot, style, cos, sin);
      kernels::rope_apply(k, static_cast<int>(c.n_head_kv), hd, n_rot, style, cos, sin);
    }
    cache.store(batch.rows[r].seq, layer, batch.rows[r].pos, k, v);
  });
}

// attn = softmax(q · kᵀ / √head_dim) · v for each query head over its sequence's positions up
// to its own (causal; the last sliding_window of them on local layers; with a sink logit per head
// in the denominator where the family has attention sinks), in groups of query heads that share a
// KV head (GQA). A sequence's rows at consecutive positions (a prompt's chunk, a verify step's
// rows) go a few at a time, sharing a pass over the cache (kernels::attention_rows_per_pass).
void Model::attend(int layer, const Batch& batch, const KvCache& cache) {
  const ModelConfig& c = config_;
  double positions = 0.0;  // each row reads the keys and values of its positions up to its own
  if (profile_)
    for (const BatchRow& row : batch.rows) positions += static_cast<double>(row.pos + 1);
  const auto timed = clock_.time(Op::kAttention, positions * static_cast<double>(kv_bytes_per_position_layer(c)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const int64_t window = c.is_local(static_cast<uint32_t>(layer)) ? c.sliding_window : 0;
  const int64_t group = ws_.group;
  const float* sinks = weights_.layers[layer].attn_sinks;  // [n_head]: a KV head's group's at g * group
  const int64_t scores_per_thread = ws_.pass_heads() * cache.n_ctx();
  const int64_t head_floats = group * c.head_dim;              // one row's heads of a KV head
  const int64_t pass_floats = ws_.pass_heads() * c.head_dim;  // a pass's q (or out)
  // Passes: runs of up to pass_rows rows of one sequence at consecutive positions.
  std::vector<std::pair<int64_t, int64_t>> passes;  // first row, rows
  for (int64_t r = 0, n = 0; r < static_cast<int64_t>(batch.size()); r += n) {
    const BatchRow& first = batch.rows[static_cast<size_t>(r)];
    for (n = 1; n < ws_.pass_rows && r + n < static_cast<int64_t>(batch.size()); ++n) {
      const BatchRow& next = batch.rows[static_cast<size_t>(r + n)];
      if (next.seq != first.seq || next.pos != first.pos + n) break;
    }
    passes.emplace_back(r, n);
  }
  pool_.run(static_cast<int64_t>(passes.size()) * c.n_head_kv, [&](int64_t t0, int64_t t1, int thread) {
    float* scores = ws_.scores.data() + thread * scores_per_thread;
    float* q = ws_.pass_q.data() + thread * 2 * pass_floats;
    float* out = q + pass_floats;
    for (int64_t t = t0; t < t1; ++t) {
      const auto [r0, n] = passes[static_cast<size_t>(t / c.n_head_kv)];
      const int64_t g = t % c.n_head_kv;
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(q + i * head_floats, ws_.q.head(r0 + i, g * group), head_floats * sizeof(float));
      const BatchRow& row = batch.rows[static_cast<size_t>(r0)];
      kernels::attention_heads(q, static_cast<int>(n), static_cast<int>(group), cache.view(row.seq, layer),
                               static_cast<int>(g), static_cast<int>(c.head_dim), row.pos + 1, scale, scores, out,
                               window, sinks ? sinks + g * group : nullptr);
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(ws_.attn.head(r0 + i, g * group), out + i * head_floats, head_floats * sizeof(float));
    }
  });
}

// Moves the residual rows that want logits to the front, in batch order; returns how many.
int64_t Model::keep_logit_rows(const Batch& batch, Logits& logits) {
  int64_t kept = 0;
  for (size_t r = 0; r < batch.size(); ++r) {
    if (!batch.rows[r].logits) continue;
    if (kept != static_cast<int64_t>(r)) std::memcpy(ws_.x.row(kept), ws_.x.row(r), ws_.x.width() * sizeof(float));
    logits.batch_rows.push_back(static_cast<int32_t>(r));
    ++kept;
  }
  return kept;
}

// logits = Wout · xn for the kept rows.
void Model::output_logits(int64_t rows, const kernels::Matrix& output, Logits& logits) {
  const auto timed = clock_.time(Op::kOutput, static_cast<double>(output.bytes()));
  acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
  kernels::grow(logits.values, static_cast<size_t>(rows) * config_.n_vocab);
  kernels::matmul(output, acts_, logits.values.data(), config_.n_vocab, pool_, scratch_);
}

}  // namespace nanoserve::model
