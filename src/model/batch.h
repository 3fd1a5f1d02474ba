// The input of one forward call: rows of (sequence, position, token), and the output:
// one logits row for each input row that asked for one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoserve::model {

struct BatchRow {
  int32_t seq = 0;      // which sequence's KV cache the row extends
  int64_t pos = 0;      // position in that sequence
  int32_t token = 0;
  bool logits = false;  // compute this row's next-token logits
};

// Rows of one sequence must come in order and continue it: the first row of a sequence
// has the position the cache holds for it so far, the next one that plus one, and so on.
// Rows of different sequences may interleave.
struct Batch {
  std::vector<BatchRow> rows;
  void add(int32_t seq, int64_t pos, int32_t token, bool logits) { rows.push_back({seq, pos, token, logits}); }
  void clear() { rows.clear(); }
  size_t size() const { return rows.size(); }
};

struct Logits {
  int64_t n_vocab = 0;
  std::vector<int32_t> batch_rows;  // the batch row each logits row belongs to, in batch order
  std::vector<float> values;        // batch_rows.size() × n_vocab
  // Every batch row's last hidden state (n_embd each, after the output norm), where the model
  // runs its MTP block (ModelConfig::mtp): the block's input. Empty otherwise.
  std::vector<float> hidden;
  std::span<const float> row(size_t i) const { return {values.data() + i * n_vocab, static_cast<size_t>(n_vocab)}; }
};

}  // namespace nanoserve::model
