// Speculative decoding in the batch engine: the drafter the options name (prompt lookup, a draft
// model, the model's MTP block, or none), and before each step the drafts of the decoding sequences, as many as the
// draft policy (engine/draft_policy.h) finds worth their rows. The engine verifies them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/batch_options.h"
#include "engine/batch_sequence.h"
#include "engine/draft_policy.h"
#include "engine/drafter.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace nanoserve::engine {

class BatchDrafting {
 public:
  // Throws std::invalid_argument for options that cannot work (--draft-model without --spec draft, ...).
  // `pool`: the target's KV pool.
  BatchDrafting(const BatchOptions& options, model::Model& target, model::KvCache& pool, int64_t context_size);

  bool on() const { return drafter_ != nullptr; }
  // Whether the drafter reads what each step kept (Drafter::follow): the engine then tells it.
  bool follows_steps() const { return drafter_ && drafter_->follows_steps(); }
  void follow(std::span<const StepKept> kept, const model::Logits& step);
  void forget(int slot);  // the sequence in slot let go of it
  // Fills the running sequences' drafts (and free guesses) for this step, and their views' draft
  // counts; `to_come`: the batch's sequences, the running ones and those a free slot will admit.
  void draft(std::span<BatchSequence* const> running, std::span<SequenceView> views, int64_t step_tokens,
             int64_t to_come);
  DraftPolicy& policy() { return policy_; }

 private:
  // A sequence as the policy weighs it: the tokens it may still generate (max_tokens, the
  // context), and those a draft could have (room for the drafts and the token after them).
  struct Offer {
    DraftPolicy::Candidate candidate;
    bool decoding = false;  // else taking in its prompt
    bool room = false;      // it speculates and has room for a draft
  };
  Offer candidate(BatchSequence& seq) const;  // clears its drafts of the last step
  void propose(std::span<BatchSequence* const> running, std::span<const DraftPolicy::Candidate> candidates,
               std::span<const int64_t> lengths);

  std::shared_ptr<Drafter> drafter_;  // none when speculation is off
  const int64_t context_size_;
  const int64_t block_size_;  // the KV pool's
  const bool recurrent_;      // the target has recurrent (delta-net) layers
  const int64_t draft_max_;
  const bool draft_always_;
  DraftPolicy policy_;
};

}  // namespace nanoserve::engine
