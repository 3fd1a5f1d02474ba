// A gated delta-net layer (Qwen3.5/3.6's "linear attention"), as llama.cpp computes it. Per row y
// (attn_norm of x) of a sequence, in position order:
//   [q|k|v] = silu(causal_conv(W_qkv · y))   per channel over the sequence's last conv_kernel inputs
//   q, k L2-normed per key head; value head h reads key head h mod key_heads
//   β = sigmoid(W_β · y), g = ssm_a * softplus(W_α · y + dt_bias)   per value head
//   S ← exp(g)·S;  δ = β (v − Sᵀk);  S ← S + k δᵀ;  o = Sᵀq / √d     S: d × d per value head
//   x += W_out · (rms_norm(o) * silu(W_z · y))                           per head, then joined
// The state S and the convolution's inputs are the sequence's (KvCache::delta_state, conv_state);
// a copy is taken after the row a capture names (RecurrentStates::capture).
#include <algorithm>
#include <cmath>

#include "kernels/delta_net.h"
#include "kernels/norm.h"
#include "kernels/ops.h"
#include "model/delta_net.h"
#include "model/model.h"

namespace nanoserve::model {
namespace {

using kernels::sigmoid;

float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

void l2_normalize(float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = 1.0f / std::max(static_cast<float>(std::sqrt(sum)), 1e-6f);
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

// The causal depthwise convolution of one row's channels `in` (in place) over the sequence's last
// kernel - 1 inputs `past` (oldest first), which then move on by this row; then SiLU.
void convolve(float* in, float* past, const float* taps, int64_t kernel, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* w = taps + c * kernel;
    float sum = w[kernel - 1] * in[c];
    for (int64_t j = 0; j + 1 < kernel; ++j) sum += w[j] * past[j * channels + c];
    for (int64_t j = 0; j + 2 < kernel; ++j) past[j * channels + c] = past[(j + 1) * channels + c];
    if (kernel > 1) past[(kernel - 2) * channels + c] = in[c];
    in[c] = sum * sigmoid(sum);  // SiLU
  }
}

}  // namespace

DeltaNetWorkspace::DeltaNetWorkspace(const ModelConfig& c)
    : qkv(c.ssm_conv_channels()), z(c.ssm_inner), beta(c.ssm_value_heads), alpha(c.ssm_value_heads),
      out(c.ssm_inner) {}

void DeltaNetWorkspace::reserve(int64_t rows) {
  for (RowBuffer* b : {&qkv, &z, &beta, &alpha, &out}) b->reserve(rows);
}

void Model::delta_net_block(int layer, const Batch& batch, KvCache& cache) {
  const LayerWeights& w = weights_.layers[layer];
  DeltaNetWorkspace& dn = *delta_;
  const auto rows = static_cast<int64_t>(batch.size());
  norm_rows(w.attn_norm, w.attn_norm_b, rows);
  {
    const auto timed = clock_.time(Op::kQkv, static_cast<double>(w.ssm_qkv.bytes() + w.ssm_z.bytes() +
                                                                 w.ssm_beta.bytes() + w.ssm_alpha.bytes()));
    acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
    kernels::matmul_many({{&w.ssm_qkv, dn.qkv.data(), dn.qkv.width()},
                          {&w.ssm_z, dn.z.data(), dn.z.width()},
                          {&w.ssm_beta, dn.beta.data(), dn.beta.width()},
                          {&w.ssm_alpha, dn.alpha.data(), dn.alpha.width()}},
                         acts_, pool_, scratch_);
  }
  {
    const auto timed = clock_.time(Op::kDeltaNet);
    const auto groups = static_cast<int64_t>(dn.starts.size()) - 1;
    // The convolution runs through a sequence's rows in order; sequences side by side.
    pool_.run(groups, [&](int64_t g0, int64_t g1, int) {
      for (int64_t g = g0; g < g1; ++g)
        for (int64_t i = dn.starts[g]; i < dn.starts[g + 1]; ++i) {
          const int64_t r = dn.order[i];
          delta_net_inputs(w, layer, batch.rows[r], r, cache);
        }
    }, 1);
    // Each value head's state is its own: (sequence, head) pairs side by side, rows in order.
    const int64_t heads = config_.ssm_value_heads;
    pool_.run(groups * heads, [&](int64_t p0, int64_t p1, int) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t i = dn.starts[p / heads]; i < dn.starts[p / heads + 1]; ++i) {
          const int64_t r = dn.order[i];
          delta_net_head(w, layer, batch.rows[r], r, p % heads, cache);
        }
    }, 1);
  }
  project_add(w.ssm_out, nullptr, nullptr, dn.out, rows, Op::kWo);
}

// The batch's rows by sequence, once per forward call (every delta-net layer goes through them so).
void Model::group_rows_by_sequence(const Batch& batch) {
  DeltaNetWorkspace& dn = *delta_;
  dn.order.clear();
  dn.starts.assign(1, 0);
  std::vector<int32_t>& seqs = ws_.seen;
  seqs.clear();
  for (const BatchRow& row : batch.rows)
    if (std::find(seqs.begin(), seqs.end(), row.seq) == seqs.end()) seqs.push_back(row.seq);
  for (const int32_t s : seqs) {
    for (size_t r = 0; r < batch.size(); ++r)
      if (batch.rows[r].seq == s) dn.order.push_back(static_cast<int64_t>(r));  // in position order (check())
    dn.starts.push_back(static_cast<int64_t>(dn.order.size()));
  }
}

// A row's convolved, normed q and k and its v (in qkv), and each value head's β and decay (in
// beta and alpha).
void Model::delta_net_inputs(const LayerWeights& w, int layer, const BatchRow& row, int64_t r, KvCache& cache) {
  const ModelConfig& c = config_;
  DeltaNetWorkspace& dn = *delta_;
  const int64_t d = c.ssm_head_dim, key_heads = c.ssm_key_heads;
  float* in = dn.qkv.row(r);
  convolve(in, cache.conv_state(row.seq, layer), w.ssm_conv, c.ssm_conv_kernel, c.ssm_conv_channels());
  RecurrentStates& states = *cache.recurrent_states();
  if (states.capture_position(row.seq) == row.pos + 1) states.copy_conv(row.seq, cache.recurrent_index(layer));
  for (int64_t h = 0; h < 2 * key_heads; ++h) l2_normalize(in + h * d, d);  // q's heads, then k's
  float *beta = dn.beta.row(r), *alpha = dn.alpha.row(r);
  for (int64_t h = 0; h < c.ssm_value_heads; ++h) {
    beta[h] = sigmoid(beta[h]);
    alpha[h] = std::exp(w.ssm_a[h] * softplus(alpha[h] + w.ssm_dt_bias[h]));  // the decay
  }
}

// Value head h of row r: its state's step, then its output normed and gated.
void Model::delta_net_head(const LayerWeights& w, int layer, const BatchRow& row, int64_t r, int64_t h,
                           KvCache& cache) {
  const ModelConfig& c = config_;
  DeltaNetWorkspace& dn = *delta_;
  const int64_t d = c.ssm_head_dim, key_heads = c.ssm_key_heads, kh = h % key_heads;
  const float* in = dn.qkv.row(r);
  const float* q = in + kh * d;
  const float* k = in + (key_heads + kh) * d;
  const float* v = in + 2 * key_heads * d + h * d;
  float* o = dn.out.row(r) + h * d;
  kernels::delta_net_step(cache.delta_state(row.seq, layer) + h * d * d, q, k, v, dn.beta.row(r)[h],
                          dn.alpha.row(r)[h], 1.0f / std::sqrt(static_cast<float>(d)), o, d);
  RecurrentStates& states = *cache.recurrent_states();
  if (states.capture_position(row.seq) == row.pos + 1) states.copy_matrix(row.seq, cache.recurrent_index(layer), h);
  kernels::rms_norm(o, w.ssm_norm, o, d, c.rms_eps);
  kernels::silu_mul(dn.z.row(r) + h * d, o, o, d);
}

}  // namespace nanoserve::model
