// Speculative decoding's guessers. A drafter proposes the tokens that may follow a sequence;
// the batch engine checks them all in one forward step of the target model (a verify step: k
// draft tokens are k + 1 rows beside everyone else's rows) and keeps the longest run the model
// agrees with, plus the model's own next token. A guess costs a row, not a read of the weights,
// so a right guess is a token without a step of its own (engine/draft_policy.h decides how many
// rows a guess is worth).
//
// Three drafters: prompt lookup (engine/prompt_lookup.h: the sequence's own text, repeated), a
// small draft model of the same vocabulary (engine/draft_model.h), and the model's own
// multi-token-prediction block (engine/mtp_drafter.h), which reads the target's hidden states.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/batch.h"

namespace nanoserve::engine {

// One sequence's question to a drafter in one step.
struct DraftAsk {
  int slot = 0;                     // the sequence's slot in the engine (a drafter may keep state per slot)
  std::span<const int32_t> tokens;  // prompt, then every token generated so far
  int64_t max = 0;                  // tokens to propose at most
  std::vector<int32_t>* out = nullptr;  // the proposal (replaced; may be shorter than max, or empty)
};

// What a propose() call spent taking in prompts (a draft model's prefill of what its cache
// lacks): a cost of a request, paid once, rather than of the step (engine/draft_policy.h prices
// it apart).
struct PromptIntake {
  int64_t tokens = 0;
  double seconds = 0;
};

// What a step of the target kept of one sequence: positions [from, to) are its now, their
// hidden states the step's rows first_row.. (model::Logits::hidden); tokens: the sequence's
// tokens after the step's choice (the token after each kept position among them).
struct StepKept {
  int slot = 0;
  int64_t from = 0, to = 0;
  size_t first_row = 0;
  std::span<const int32_t> tokens;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // How many tokens propose() could give this sequence now, at most `max` (cheap: the engine
  // asks before it decides how many to take).
  virtual int64_t available(std::span<const int32_t> tokens, int64_t max) const = 0;
  // The tokens a proposal for the sequence in `slot` would first have to take in (a draft
  // model's cache lacks them: a new prompt, or what was generated while it did not draft);
  // 0 where proposing keeps no state of its own.
  virtual int64_t intake(int /*slot*/, std::span<const int32_t> /*tokens*/) const { return 0; }
  // Proposes for every ask at once (a draft model computes them in one batched pass).
  virtual PromptIntake propose(std::span<const DraftAsk> asks) = 0;
  // Whether a guess costs next to nothing (prompt lookup): then a sequence that drafts nothing
  // in a step is still asked for one token, checked against the token the step chooses, so
  // that its acceptance is measured without spending a row (engine/draft_policy.h).
  virtual bool guesses_are_free() const { return false; }
  // Whether it reads the target's hidden states (follow); the target then keeps them.
  virtual bool follows_steps() const { return false; }
  // After each step of the target, before its blocks are published: what it kept of each
  // sequence (a drafter that reads hidden states takes them in here).
  virtual void follow(std::span<const StepKept> /*kept*/, const model::Logits& /*step*/) {}
  // The sequence in `slot` let go of it (finished or preempted).
  virtual void forget(int /*slot*/) {}
};

}  // namespace nanoserve::engine
