// The working buffers of the mixture-of-experts feed-forward (moe.cpp). Only a model with
// experts makes them (Model::moe_), so a dense model carries none of them.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/activations.h"
#include "kernels/matmul.h"
#include "model/config.h"
#include "model/row_buffer.h"

namespace nanoserve::model {

struct MoeWorkspace {
  explicit MoeWorkspace(const ModelConfig& c);
  // Grows the row buffers for a batch of `rows` rows, each gathered once per chosen expert.
  void reserve(int64_t rows);

  int64_t slots;  // n_expert_used: the (row, slot) pairs of a row
  // Router logits; the rows one expert takes, gathered; its hidden rows and outputs; the choices.
  RowBuffer router;                  // [n_expert]
  RowBuffer expert_in, expert_out;   // [n_embd]
  RowBuffer expert_gate, expert_up;  // [n_ff_expert]
  std::vector<int32_t> chosen;       // [rows × n_expert_used]  expert ids, by falling probability
  std::vector<float> chosen_weight;  // [rows × n_expert_used]  renormalised probabilities
  std::vector<int64_t> taken;        // [rows × n_expert_used]  (row, slot) pairs as row * n_expert_used + slot, by expert
  std::vector<int64_t> expert_start;   // [n_expert + 1]  where each expert's pairs begin in `taken`
  std::vector<int64_t> expert_next;    // filling `taken`; then where each pair's output lies
  std::vector<uint32_t> experts_chosen;  // the experts some row chose, most rows first
  std::vector<kernels::Activations> expert_acts, hidden_acts;  // [n_expert]  the i-th chosen's input, hidden rows
  std::vector<kernels::MatmulJob> expert_jobs;                  // one pass of the pool's matrices
  std::vector<int32_t> expert_order;  // [n_expert]  a row's experts, sorted by probability
  // The shared expert's (ArchFeatures::shared_expert; 0 wide without): hidden rows, output, gate.
  RowBuffer shared_gate, shared_up;  // [n_ff_shared]
  RowBuffer shared_out;              // [n_embd]
  std::vector<float> shared_scale;   // [rows]  sigmoid(gate_inp · y)
};

}  // namespace nanoserve::model
