// The multi-token-prediction block of Model (see model.h): the file's extra decoder layer that
// guesses the token after next. For a row at position p it reads the model's last hidden state
// h_p (after the output norm, as llama.cpp's and vLLM's drafts read it) and the embedding of the
// token after p, t_{p+1}:
//   x  = W_eh · [enorm(embed(t_{p+1})) | hnorm(h_p)]
//   x  = the decoder layer (attention over the block's own keys and values, then the feed-forward)
//   logits = Wout · head_norm(x)           the guess of t_{p+2}
// The layer is the model's layer n_layer; its keys and values are the cache's layer n_layer.
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/norm.h"
#include "kernels/scratch.h"
#include "model/model.h"

namespace nanoserve::model {

void Model::check_filled(const Batch& batch, const KvCache& cache) const {
  if (!config_.mtp) throw std::logic_error("forward_mtp: the model runs no MTP block");
  if (!cache.fits(config_)) throw std::invalid_argument("the KV cache was made for a model of another shape");
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchRow& row = batch.rows[i];
    if (row.token < 0 || row.token >= static_cast<int64_t>(config_.n_vocab) || row.seq < 0 ||
        row.seq >= cache.n_seq() || row.pos < 0 || row.pos >= cache.length(row.seq))
      throw std::invalid_argument("MTP batch row " + std::to_string(i) + ": token " + std::to_string(row.token) +
                                  " at position " + std::to_string(row.pos) +
                                  " is not at a filled position of a sequence, or not in the vocabulary");
  }
}

void Model::forward_mtp(const Batch& batch, std::span<const float> hidden, KvCache& cache, std::vector<float>& out) {
  check_filled(batch, cache);
  const ModelConfig& c = config_;
  const auto rows = static_cast<int64_t>(batch.size());
  if (hidden.size() != static_cast<size_t>(rows) * c.n_embd)
    throw std::invalid_argument("forward_mtp: a hidden state per row is needed");
  out.clear();
  if (rows == 0) return;
  reserve(rows, cache.n_ctx());
  clock_.start(profile_);
  embed(batch, weights_.mtp.embed);
  {
    const auto timed = clock_.time(Op::kNorm);
    for (int64_t r = 0; r < rows; ++r) {
      kernels::rms_norm(ws_.x.row(r), weights_.mtp.enorm, ws_.mtp_in.row(r), c.n_embd, c.rms_eps);
      kernels::rms_norm(hidden.data() + r * c.n_embd, weights_.mtp.hnorm, ws_.mtp_in.row(r) + c.n_embd, c.n_embd,
                        c.rms_eps);
    }
  }
  {
    const auto timed = clock_.time(Op::kQkv, static_cast<double>(weights_.mtp.eh_proj.bytes()));
    acts_.set(ws_.mtp_in.data(), rows, ws_.mtp_in.width(), ws_.mtp_in.width());
    kernels::matmul(weights_.mtp.eh_proj, acts_, ws_.x.data(), c.n_embd, pool_, scratch_);
  }
  const auto layer = static_cast<int>(c.n_layer);
  attention_block(layer, batch, cache);
  ffn_block(layer, rows);
  for (int64_t r = 0; r < rows; ++r)
    if (batch.rows[static_cast<size_t>(r)].logits) out.insert(out.end(), ws_.x.row(r), ws_.x.row(r) + c.n_embd);
}

void Model::mtp_logits(std::span<const float> rows_in, Logits& logits) {
  if (!config_.mtp) throw std::logic_error("mtp_logits: the model runs no MTP block");
  const ModelConfig& c = config_;
  const auto rows = static_cast<int64_t>(rows_in.size() / c.n_embd);
  logits.n_vocab = c.n_vocab;
  logits.batch_rows.clear();
  if (rows == 0) return;
  reserve(rows, 0);
  clock_.start(profile_);
  std::memcpy(ws_.x.data(), rows_in.data(), static_cast<size_t>(rows) * c.n_embd * sizeof(float));
  for (int64_t r = 0; r < rows; ++r) logits.batch_rows.push_back(static_cast<int32_t>(r));
  norm_rows(weights_.mtp.head_norm, nullptr, rows);
  output_logits(rows, weights_.mtp.head, logits);
}

}  // namespace nanoserve::model
