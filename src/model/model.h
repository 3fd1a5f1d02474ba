// A Llama-family model (llama, qwen2, qwen3, phi3; and gpt2, whose differences are features of
// its config) loaded from GGUF, and its forward pass.
//
// forward() evaluates a batch of token rows in one pass over the weights: per layer,
//   h   = x + Wo · attention(rope(Wq · norm(x)), rope(Wk · norm(x)), Wv · norm(x))
//   x'  = h + Wdown · (silu(Wgate · norm(h)) * (Wup · norm(h)))
// then logits = Wout · norm(x) for the rows that ask for them. The model owns its thread pool
// and working buffers, so one Model serves one caller at a time.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "kernels/activations.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/delta_net.h"
#include "model/kv_cache.h"
#include "model/moe.h"
#include "model/op_profile.h"
#include "model/row_buffer.h"
#include "model/weights.h"

namespace nanoserve::model {

struct ModelOptions {
  int threads = 0;  // 0 = the machine's physical cores
  // Run on this pool instead of one of its own (not owned; it must outlive the model): a draft
  // model runs between its target's steps, on the target's threads, which are then still awake.
  kernels::ThreadPool* pool = nullptr;
  // How the KV cache stores keys and values (config().kv_type); unset: NANOSERVE_KV_TYPE, else f16.
  std::optional<kernels::KvType> kv_type = std::nullopt;
  // Run the file's multi-token-prediction block, where it has one (config().mtp): forward()
  // then keeps every row's last hidden state, and forward_mtp() drafts (engine/mtp_drafter.h).
  bool mtp = false;
};

class Model {
 public:
  // Maps the file and binds its weights (throws on an unsupported or malformed model).
  explicit Model(const std::string& path, ModelOptions options = {});

  const ModelConfig& config() const { return config_; }
  const gguf::File& file() const { return file_; }
  int threads() const { return pool_.size(); }
  // The pool the forward pass runs on, idle between forward calls: bench-engine reads the
  // weights on it between decode steps, to measure the bandwidth decode had.
  kernels::ThreadPool& pool() { return pool_; }
  // The positions a sequence may reach (the engine's context size; the trained context until
  // called). Phi-3's LongRoPE factors depend on it, as llama.cpp chooses them by its context
  // size: the short ones up to rope_original_context, the long ones beyond. Returns positions.
  int64_t set_context(int64_t positions);
  // Bytes of weights one decode step reads (model::weight_bytes_per_token).
  uint64_t weight_bytes_per_token() const;

  // Appends the batch's rows to their sequences in `cache` (reserving the blocks they need)
  // and fills `logits` (reusing its storage) for the rows that asked. Throws
  // std::invalid_argument for a row whose token, sequence or position does not fit (see
  // Batch), KvCacheFull when the pool lacks the blocks; the cache is unchanged then.
  void forward(const Batch& batch, KvCache& cache, Logits& logits);

  // The MTP block (config().mtp) over rows whose positions forward() has filled: row r's token
  // is the one after its position, hidden's row r the model's last hidden state there
  // (Logits::hidden). Stores the block's keys and values at those positions (the cache's layer
  // n_layer) and keeps the block's output in `out` (n_embd each) for the rows that ask for
  // logits, in batch order: a draft's input (mtp_logits). Throws std::invalid_argument for a
  // row outside its sequence's positions.
  void forward_mtp(const Batch& batch, std::span<const float> hidden, KvCache& cache, std::vector<float>& out);
  // The MTP head's logits for rows of forward_mtp's output: Wout · head_norm(row), a logits
  // row each.
  void mtp_logits(std::span<const float> rows, Logits& logits);

  // Attaches a profile that the following forward calls add their time and bytes to, op by
  // op (nullptr detaches; not owned).
  void set_profile(OpProfile* profile) { profile_ = profile; }

 private:
  // The buffers every model's forward pass uses (a mixture of experts' own are MoeWorkspace),
  // sized for the largest batch seen so far (grown outside the kernels); one row per batch row,
  // [rows × width]. A feature's buffer is 0 wide in a model without the feature.
  struct Workspace {
    explicit Workspace(const ModelConfig& c);
    RowBuffer x;                   // [n_embd]  the residual stream
    RowBuffer xn;                  // [n_embd]  x normed; also each block's output before it is added to x
    RowBuffer q;                   // [q_dim]   n_head heads of head_dim
    RowBuffer q_and_gate;          // [2 × q_dim]  gated_q: Wq's output, per head q then its gate (else 0 wide)
    RowBuffer q_gate;              // [q_dim]   gated_q: the gate, per head
    RowBuffer k, v;                // [kv_dim]  n_head_kv heads of head_dim
    RowBuffer attn;                // [q_dim]   attention's output, per query head
    RowBuffer gate, up;            // [n_ff]    the dense feed-forward's (0 wide with experts)
    RowBuffer rope_cos, rope_sin;  // [rope_dims / 2]  each row's RoPE angles at its position
    RowBuffer mtp_in;              // [2 × n_embd]  mtp: the MTP block's normed embedding | hidden state
    // [rope_dims / 2]  the same for sliding-window layers (0 wide without them: swa_pattern)
    RowBuffer rope_cos_swa, rope_sin_swa;
    int64_t group;                 // query heads per KV head
    int64_t pass_rows;             // a sequence's rows that share a pass of attention (kernels::attention_rows_per_pass)
    std::vector<float> scores;     // [threads × pass_heads() × n_ctx]  attention scores
    std::vector<float> pass_q;     // [threads × 2 × pass_heads() × head_dim]  a pass's q, then its out
    int64_t pass_heads() const { return pass_rows * group; }  // the query heads of a pass (one KV head's)
    std::vector<int64_t> next_pos;  // check(): per sequence, the next position
    std::vector<int32_t> seen;      // the batch's sequences, in order of their first row
  };

  void interleave_weights();
  void check(const Batch& batch, const KvCache& cache);
  void check_filled(const Batch& batch, const KvCache& cache) const;  // forward_mtp's rows
  void reserve_kv(KvCache& cache);
  void reserve(int64_t rows, int64_t n_ctx);
  // The steps of forward(), each one op of the profile.
  void embed(const Batch& batch, const kernels::Matrix& table);
  void attention_block(int layer, const Batch& batch, KvCache& cache);
  void split_gated_q(int64_t rows);
  void gate_attention(int64_t rows);
  void delta_net_block(int layer, const Batch& batch, KvCache& cache);
  void group_rows_by_sequence(const Batch& batch);
  void delta_net_inputs(const LayerWeights& w, int layer, const BatchRow& row, int64_t r, KvCache& cache);
  void delta_net_head(const LayerWeights& w, int layer, const BatchRow& row, int64_t r, int64_t h, KvCache& cache);
  void shared_expert(const LayerWeights& w, int64_t rows);
  void ffn_block(int layer, int64_t rows);
  void moe_ffn(int layer, int64_t rows);
  void choose_experts(int64_t rows);
  void norm_rows(const float* weight, const float* bias, int64_t rows);
  void project_add(const kernels::Matrix& w, const float* bias, const float* post_norm, RowBuffer& in, int64_t rows,
                   Op op);
  void position_and_store(const LayerWeights& w, int layer, const Batch& batch, KvCache& cache);
  void attend(int layer, const Batch& batch, const KvCache& cache);
  int64_t keep_logit_rows(const Batch& batch, Logits& logits);
  void output_logits(int64_t rows, const kernels::Matrix& output, Logits& logits);

  gguf::File file_;
  ModelConfig config_;
  ModelWeights weights_;
  const float* rope_freqs_ = nullptr;  // the RoPE frequency divisors in use (set_context)
  std::optional<kernels::Yarn> yarn_;  // YaRN's ramp and magnitude (config_.rope_yarn), made once
  std::unique_ptr<kernels::ThreadPool> own_pool_;  // none when options.pool is given
  kernels::ThreadPool& pool_;
  kernels::MatmulScratch scratch_;
  kernels::Activations acts_;
  Workspace ws_;
  std::optional<MoeWorkspace> moe_;  // a mixture of experts' buffers; none for a dense model
  std::optional<DeltaNetWorkspace> delta_;  // the delta-net layers' buffers; none without them
  OpProfile* profile_ = nullptr;
  OpClock clock_;
};

}  // namespace nanoserve::model
