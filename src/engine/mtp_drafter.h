// The model's own multi-token-prediction block as a drafter (engine/drafter.h): the block that
// some files carry after the model's layers (Qwen3.5/3.6's "nextn" block, model/mtp.cpp) guesses
// the token after the next from the model's last hidden state and the next token's embedding.
//
// It follows the target step by step rather than catching up: after every step it runs the
// block over the positions each sequence kept (their hidden states are the step's), which fills
// the block's keys and values in the target's own KV pool (its layer n_layer: the prefix cache
// and the disk tier keep them with the blocks) and leaves, per sequence, the block's output at
// its last position. A draft is then one output matrix away: the head's argmax there. One block
// guesses one token.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/drafter.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace nanoserve::engine {

class MtpDrafter final : public Drafter {
 public:
  // `target` runs its MTP block (config().mtp); `pool` is its KV pool of n_seq slots.
  MtpDrafter(model::Model& target, model::KvCache& pool);

  int64_t available(std::span<const int32_t> tokens, int64_t max) const override;
  PromptIntake propose(std::span<const DraftAsk> asks) override;
  bool follows_steps() const override { return true; }
  void follow(std::span<const StepKept> kept, const model::Logits& step) override;
  void forget(int slot) override;

 private:
  model::Model& target_;
  model::KvCache& pool_;
  const int64_t n_embd_;
  // Per slot: the block's output at the last position it ran (n_embd), and that position (-1: none).
  std::vector<float> last_;
  std::vector<int64_t> last_pos_;
  model::Batch batch_;
  std::vector<float> hidden_, out_, rows_;
  model::Logits logits_;
};

}  // namespace nanoserve::engine
