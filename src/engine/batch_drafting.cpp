#include "engine/batch_drafting.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine/draft_model.h"
#include "engine/mtp_drafter.h"
#include "engine/prompt_lookup.h"

namespace nanoserve::engine {
namespace {

std::shared_ptr<Drafter> make_drafter(const BatchOptions& options, model::Model& target, model::KvCache& pool,
                                      int64_t context_size) {
  if (options.draft_max < 1) throw std::invalid_argument("--draft-max must be at least 1");
  if (options.spec != SpecMode::Draft && !options.draft_model_path.empty())
    throw std::invalid_argument("--draft-model needs --spec draft");
  if (options.spec == SpecMode::Mtp && !target.config().mtp)
    throw std::invalid_argument("--spec mtp: the model has no multi-token-prediction block (nextn_predict_layers)");
  if (options.test_drafter) return options.test_drafter;
  switch (options.spec) {
    case SpecMode::Off:
      return nullptr;
    case SpecMode::Auto:
      if (target.config().mtp) return std::make_shared<MtpDrafter>(target, pool);
      return std::make_shared<PromptLookup>();
    case SpecMode::Lookup:
      return std::make_shared<PromptLookup>();
    case SpecMode::Mtp:
      return std::make_shared<MtpDrafter>(target, pool);
    case SpecMode::Draft:
      if (options.draft_model_path.empty()) throw std::invalid_argument("--spec draft needs --draft-model");
      return std::make_shared<DraftModel>(DraftModelOptions{.path = options.draft_model_path,
                                                            .n_seq = options.parallel,
                                                            .context_size = context_size,
                                                            .draft_max = options.draft_max},
                                          target);
  }
  return nullptr;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

BatchDrafting::BatchDrafting(const BatchOptions& options, model::Model& target, model::KvCache& pool,
                             int64_t context_size)
    : drafter_(make_drafter(options, target, pool, context_size)),
      context_size_(context_size),
      block_size_(pool.block_size()),
      recurrent_(target.config().n_recurrent_layers() > 0),
      draft_max_(options.draft_max),
      draft_always_(options.draft_always),
      policy_(options.parallel, options.parallel * (options.draft_max + 1),
              !(drafter_ && drafter_->guesses_are_free())) {}

BatchDrafting::Offer BatchDrafting::candidate(BatchSequence& seq) const {
  seq.draft.clear();
  seq.guess.clear();
  const GenerationRequest& r = seq.generation->request();
  const int64_t generated = seq.size() - seq.prompt_size();
  const int64_t positions_left = context_size_ - seq.size();
  int64_t room = std::min({draft_max_, r.max_tokens - generated - 1, positions_left});
  // A recurrent state keeps one copy a step: the one its drafts may send it back to (after the
  // last token). The prefix cache's copy at a block's end must be that one, so drafts stop short
  // of the next block's end.
  if (recurrent_ && seq.caching) room = std::min(room, (seq.size() / block_size_ + 1) * block_size_ - seq.size() - 1);
  Offer o{.candidate = {.slot = seq.slot, .remaining = std::min(r.max_tokens - generated, positions_left)},
          .decoding = seq.size() - seq.cached == 1};  // else taking in its prompt
  o.room = o.decoding && seq.speculating && room > 0;
  if (o.room) {
    o.candidate.available = drafter_->available(seq.tokens, room);
    o.candidate.intake = drafter_->intake(seq.slot, seq.tokens);
  }
  return o;
}

void BatchDrafting::draft(std::span<BatchSequence* const> running, std::span<SequenceView> views, int64_t step_tokens,
                          int64_t to_come) {
  // Every running sequence is a candidate, those that cannot draft now (taking in their prompts,
  // not speculating, no room) with nothing available: the batch's steps go on while any of them
  // has tokens left, which the policy weighs.
  std::vector<DraftPolicy::Candidate> candidates;
  int64_t decoders = 0;
  bool any_room = false;
  for (BatchSequence* seq : running) {
    const Offer o = candidate(*seq);
    candidates.push_back(o.candidate);
    decoders += o.decoding ? 1 : 0;
    any_room = any_room || o.room;
  }
  if (!any_room) return;
  std::vector<int64_t> lengths;
  if (draft_always_) {
    for (const DraftPolicy::Candidate& c : candidates) lengths.push_back(c.available);
  } else {
    lengths = policy_.allocate(decoders, step_tokens - decoders, candidates, to_come);
  }
  propose(running, candidates, lengths);
  for (size_t k = 0; k < running.size(); ++k) {
    BatchSequence& seq = *running[k];
    if (static_cast<int64_t>(seq.draft.size()) > lengths[k]) seq.draft.resize(static_cast<size_t>(lengths[k]));
    views[k].drafts = static_cast<int64_t>(seq.draft.size());
  }
}

void BatchDrafting::propose(std::span<BatchSequence* const> running,
                            std::span<const DraftPolicy::Candidate> candidates, std::span<const int64_t> lengths) {
  std::vector<DraftAsk> asks;
  for (size_t k = 0; k < candidates.size(); ++k) {
    BatchSequence& seq = *running[k];
    if (lengths[k] > 0)
      asks.push_back({.slot = seq.slot, .tokens = seq.tokens, .max = lengths[k], .out = &seq.draft});
    else if (drafter_->guesses_are_free() && candidates[k].available > 0)
      asks.push_back({.slot = seq.slot, .tokens = seq.tokens, .max = 1, .out = &seq.guess});
  }
  if (asks.empty()) return;
  const auto started = std::chrono::steady_clock::now();
  const PromptIntake prompts = drafter_->propose(asks);
  int64_t rounds = 0, tokens = 0;
  for (const DraftAsk& ask : asks) rounds = std::max(rounds, ask.max), tokens += ask.max;
  policy_.record_drafting(rounds, tokens, seconds_since(started) - prompts.seconds);
  policy_.record_intake(prompts.tokens, prompts.seconds);
}

void BatchDrafting::follow(std::span<const StepKept> kept, const model::Logits& step) {
  if (drafter_) drafter_->follow(kept, step);
}

void BatchDrafting::forget(int slot) {
  if (drafter_) drafter_->forget(slot);
}

}  // namespace nanoserve::engine
