// A draft model (a drafter, engine/drafter.h): a smaller model of the same vocabulary guesses
// the target's next tokens, greedily. It runs on the same forward pass as the target and on
// the target's threads, with a KV pool of its own (a slot per engine slot), and computes the
// drafts of every sequence of a step together: a catch-up pass over the tokens its cache lacks
// (a new prompt, the tokens the target chose last step), then one row per sequence per draft
// token.
//
// Its cache follows each slot's tokens by itself: before drafting, the slot keeps the longest
// prefix of its cached tokens that the sequence still begins with (rejected drafts and another
// request's tokens fall away), so the engine tells it nothing else.
//
// Greedy drafts are exact for sampled requests too: the engine keeps a draft token only where
// the target's own choice (sampled as in plain decoding) equals it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/drafter.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace nanoserve::engine {

struct DraftModelOptions {
  std::string path;           // GGUF file
  int n_seq = 1;              // the engine's slots
  int64_t context_size = 0;   // positions one sequence may reach (the target's context)
  int64_t draft_max = 8;      // tokens one sequence is asked for at most
};

class DraftModel final : public Drafter {
 public:
  // Loads the model; throws std::invalid_argument when its vocabulary is not the target's
  // (another size, or a token spelled differently), naming the first difference.
  // Runs on the target's thread pool.
  DraftModel(const DraftModelOptions& options, model::Model& target);

  int64_t available(std::span<const int32_t> tokens, int64_t max) const override;
  int64_t intake(int slot, std::span<const int32_t> tokens) const override;
  PromptIntake propose(std::span<const DraftAsk> asks) override;

 private:
  // The tokens of `tokens` (but its last) that the slot's cache holds: the longest common prefix.
  size_t kept(int slot, std::span<const int32_t> tokens) const;
  // Feeds each slot's missing tokens, logits for the last; returns a prompt's worth of them
  // (more than kPromptRows in all, fed in passes of their own) and their seconds.
  PromptIntake catch_up(std::span<const DraftAsk> asks);
  void feed(int slot, int32_t token, bool logits);  // a row at the slot's next position, into batch_
  void forward();                                     // batch_ into logits_

  static constexpr size_t kPromptRows = 16;

  model::Model model_;
  model::KvCache cache_;
  const int64_t context_size_;
  std::vector<std::vector<int32_t>> fed_;  // per slot: the tokens its cache holds
  model::Batch batch_;
  model::Logits logits_;
};

// Throws std::invalid_argument when the two files' vocabularies differ (for the draft model).
void check_same_vocabulary(const gguf::File& target, const gguf::File& draft);

}  // namespace nanoserve::engine
