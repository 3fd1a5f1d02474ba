// The mixture-of-experts feed-forward (qwen3moe, gpt-oss), as llama.cpp computes it: for each row
// y = ffn_norm(x), router logits W_router · y (+ b_router), p = softmax over all experts, the
// n_expert_used largest p renormalised to sum 1 (the same weights as gpt-oss's softmax over the
// chosen logits), and
//   x += Σ_slots w_slot · down_e(silu(gate_e · y) * (up_e · y)),   e = the slot's expert,
// (gpt-oss: down_e(swiglu_clamped(gate_e · y + b, up_e · y + b)) + b, each expert's biases)
// the slots summed in order of falling p. Rows are grouped by expert, so that a step reads each
// chosen expert's weights once for all the rows that chose it (what makes batching a mixture of
// experts pay); a row's result does not depend on the rows beside it.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/ops.h"
#include "model/model.h"
#include "model/moe.h"

namespace nanoserve::model {

MoeWorkspace::MoeWorkspace(const ModelConfig& c)
    : slots(c.n_expert_used), router(c.n_expert), expert_in(c.n_embd), expert_out(c.n_embd),
      expert_gate(c.n_ff_expert), expert_up(c.n_ff_expert), expert_acts(c.n_expert), hidden_acts(c.n_expert),
      shared_gate(c.n_ff_shared), shared_up(c.n_ff_shared), shared_out(c.features.shared_expert ? c.n_embd : 0) {}

void MoeWorkspace::reserve(int64_t rows) {
  router.reserve(rows);
  for (RowBuffer* b : {&shared_gate, &shared_up, &shared_out}) b->reserve(rows);
  for (RowBuffer* b : {&expert_in, &expert_out, &expert_gate, &expert_up}) b->reserve(rows * slots);
}

// moe_->chosen / chosen_weight from the router logits of each row's y (in ws_.xn).
void Model::choose_experts(int64_t rows) {
  const ModelConfig& c = config_;
  MoeWorkspace& moe = *moe_;
  const int64_t k = c.n_expert_used;
  moe.chosen.resize(static_cast<size_t>(rows * k));
  moe.chosen_weight.resize(static_cast<size_t>(rows * k));
  std::vector<int32_t>& order = moe.expert_order;  // kept between steps: no allocation per layer
  order.resize(c.n_expert);
  for (int64_t r = 0; r < rows; ++r) {
    float* p = moe.router.row(r);
    kernels::softmax(p, c.n_expert);
    std::iota(order.begin(), order.end(), 0);
    // The k most probable, the lower id first among equals.
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [p](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    float sum = 0.0f;
    for (int64_t j = 0; j < k; ++j) sum += p[order[j]];
    for (int64_t j = 0; j < k; ++j) {
      moe.chosen[r * k + j] = order[j];
      moe.chosen_weight[r * k + j] = p[order[j]] / sum;
    }
  }
}

void Model::moe_ffn(int layer, int64_t rows) {
  const LayerWeights& w = weights_.layers[layer];
  const ModelConfig& c = config_;
  MoeWorkspace& moe = *moe_;
  const int64_t k = c.n_expert_used, n = c.n_embd, ff = c.n_ff_expert;
  {
    const auto timed = clock_.time(Op::kRouter, static_cast<double>(w.router.bytes()));
    acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
    kernels::matmul(w.router, acts_, moe.router.data(), moe.router.width(), pool_, scratch_);
    if (w.router_b)
      for (int64_t r = 0; r < rows; ++r) kernels::add(moe.router.row(r), w.router_b, c.n_expert);
    choose_experts(rows);
  }
  if (c.features.shared_expert) shared_expert(w, rows);
  // The (row, slot) pairs grouped by expert, in order within each: expert e's are rows
  // start[e] .. start[e + 1] of expert_in, and taken[p] says whose row p is.
  std::vector<int64_t>& start = moe.expert_start;
  start.assign(c.n_expert + 1, 0);
  for (int64_t i = 0; i < rows * k; ++i) ++start[moe.chosen[i] + 1];
  for (uint32_t e = 0; e < c.n_expert; ++e) start[e + 1] += start[e];
  moe.taken.resize(rows * k);
  {
    std::vector<int64_t>& next = moe.expert_next;
    next.assign(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < rows * k; ++i) moe.taken[next[moe.chosen[i]]++] = i;
  }
  for (int64_t p = 0; p < rows * k; ++p)
    std::memcpy(moe.expert_in.row(p), ws_.xn.row(moe.taken[p] / k), n * sizeof(float));
  // Every chosen expert's gate and up in one pass of the pool, then every down in another. The
  // chosen experts go most rows first, and the i-th takes the i-th Activations of the pool, which
  // then never holds more than rows * k / (i + 1) rows: the pool stays within ~4 × rows * k rows
  // whatever the routing (with one Activations per expert, each grew to the most rows its expert
  // ever took: 234 MB more at Qwen3-30B-A3B's 4k-token prompt).
  std::vector<uint32_t>& used = moe.experts_chosen;
  used.clear();
  for (uint32_t e = 0; e < c.n_expert; ++e)
    if (start[e + 1] > start[e]) used.push_back(e);
  std::stable_sort(used.begin(), used.end(),
                   [&](uint32_t a, uint32_t b) { return start[a + 1] - start[a] > start[b + 1] - start[b]; });
  std::vector<kernels::MatmulJob>& jobs = moe.expert_jobs;
  jobs.clear();
  // Calls fn(i, e, its first row, its rows) for the i-th chosen expert e, in that order.
  auto for_each_chosen = [&](auto&& fn) {
    for (size_t i = 0; i < used.size(); ++i) {
      const uint32_t e = used[i];
      fn(i, e, start[e], start[e + 1] - start[e]);
    }
  };
  double bytes = 0.0;
  for_each_chosen([&](size_t i, uint32_t e, int64_t first, int64_t m) {
    kernels::Activations& in = moe.expert_acts[i];
    in.set(moe.expert_in.row(first), m, n, moe.expert_in.width());
    jobs.push_back({&w.expert_gate[e], &in, moe.expert_gate.row(first), moe.expert_gate.width()});
    jobs.push_back({&w.expert_up[e], &in, moe.expert_up.row(first), moe.expert_up.width()});
    bytes += static_cast<double>(w.expert_gate[e].bytes() + w.expert_up[e].bytes());
  });
  {
    const auto timed = clock_.time(Op::kGateUp, bytes);
    kernels::matmul_jobs(jobs, pool_, scratch_);
  }
  {
    const auto timed = clock_.time(Op::kSiluMul);
    if (w.expert_gate_b)  // each expert's own biases on its rows
      for_each_chosen([&](size_t, uint32_t e, int64_t first, int64_t m) {
        for (int64_t p = first; p < first + m; ++p) {
          kernels::add(moe.expert_gate.row(p), w.expert_gate_b + e * ff, ff);
          kernels::add(moe.expert_up.row(p), w.expert_up_b + e * ff, ff);
        }
      });
    if (c.features.ffn == ArchFeatures::Ffn::SwigluClamped)
      kernels::swiglu_clamped(moe.expert_gate.data(), moe.expert_up.data(), moe.expert_gate.data(), rows * k * ff,
                              ArchFeatures::kSwigluAlpha, ArchFeatures::kSwigluLimit);
    else
      kernels::silu_mul(moe.expert_gate.data(), moe.expert_up.data(), moe.expert_gate.data(), rows * k * ff);
  }
  jobs.clear();
  bytes = 0.0;
  for_each_chosen([&](size_t i, uint32_t e, int64_t first, int64_t m) {
    kernels::Activations& hidden = moe.hidden_acts[i];
    hidden.set(moe.expert_gate.row(first), m, ff, moe.expert_gate.width());
    jobs.push_back({&w.expert_down[e], &hidden, moe.expert_out.row(first), moe.expert_out.width()});
    bytes += static_cast<double>(w.expert_down[e].bytes());
  });
  const auto timed = clock_.time(Op::kDown, bytes);
  kernels::matmul_jobs(jobs, pool_, scratch_);
  if (w.expert_down_b)
    for_each_chosen([&](size_t, uint32_t e, int64_t first, int64_t m) {
      for (int64_t p = first; p < first + m; ++p) kernels::add(moe.expert_out.row(p), w.expert_down_b + e * n, n);
    });
  // Each row's slots weighted and summed in order (llama.cpp's order; each product rounded
  // before it is added, as when the slots were summed from buffers of their own), through xn
  // (free once gathered), then into the residual.
  std::vector<int64_t>& place = moe.expert_next;  // where each (row, slot) pair's output lies
  place.resize(rows * k);
  for (int64_t p = 0; p < rows * k; ++p) place[moe.taken[p]] = p;
  for (int64_t r = 0; r < rows; ++r) {
    float* sum = ws_.xn.row(r);
    for (int64_t j = 0; j < k; ++j) {
      const float* y = moe.expert_out.row(place[r * k + j]);
      const float weight = moe.chosen_weight[r * k + j];
      if (j == 0)
        for (int64_t d = 0; d < n; ++d) sum[d] = y[d] * weight;
      else
        for (int64_t d = 0; d < n; ++d) sum[d] += y[d] * weight;
    }
    if (c.features.shared_expert) {
      const float* y = moe.shared_out.row(r);
      const float scale = moe.shared_scale[r];
      for (int64_t d = 0; d < n; ++d) sum[d] += y[d] * scale;
    }
    kernels::add(ws_.x.row(r), sum, n);
  }
}

// The shared expert of every row: down(silu(gate · y) * (up · y)), and the scale its output joins
// the routed sum with, sigmoid(gate_inp · y).
void Model::shared_expert(const LayerWeights& w, int64_t rows) {
  const auto timed = clock_.time(Op::kGateUp, static_cast<double>(w.shared_gate.bytes() + w.shared_up.bytes() +
                                                                  w.shared_down.bytes()));
  MoeWorkspace& moe = *moe_;
  const int64_t n = config_.n_embd;
  moe.shared_scale.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* y = ws_.xn.row(r);
    double dot = 0.0;
    for (int64_t d = 0; d < n; ++d) dot += static_cast<double>(w.shared_gate_inp[d]) * y[d];
    moe.shared_scale[r] = kernels::sigmoid(static_cast<float>(dot));
  }
  acts_.set(ws_.xn.data(), rows, ws_.xn.width(), ws_.xn.width());
  kernels::matmul_many({{&w.shared_gate, moe.shared_gate.data(), moe.shared_gate.width()},
                        {&w.shared_up, moe.shared_up.data(), moe.shared_up.width()}},
                       acts_, pool_, scratch_);
  kernels::silu_mul(moe.shared_gate.data(), moe.shared_up.data(), moe.shared_gate.data(),
                    rows * moe.shared_gate.width());
  kernels::Activations& hidden = moe.hidden_acts[0];
  hidden.set(moe.shared_gate.data(), rows, config_.n_ff_shared, moe.shared_gate.width());
  kernels::matmul(w.shared_down, hidden, moe.shared_out.data(), moe.shared_out.width(), pool_, scratch_);
}

}  // namespace nanoserve::model
