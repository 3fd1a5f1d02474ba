// Prompt lookup (a drafter, engine/drafter.h): text often repeats itself (code that names its
// variables again, an edit of a file in the prompt, a quoted passage, a list that follows a
// pattern). The proposal is what followed, earlier in the same sequence, the longest recent
// n-gram its tokens end with: find the last kMaxNgram..kMinNgram tokens earlier in the sequence
// (the longest n first; the most recent occurrence with `max` tokens after it, else the one with
// the most) and propose the tokens after it.
// No model, no state: a search of the sequence per step (about n × length comparisons).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/drafter.h"

namespace nanoserve::engine {

class PromptLookup final : public Drafter {
 public:
  static constexpr int64_t kMaxNgram = 4;
  static constexpr int64_t kMinNgram = 2;  // a single repeated token predicts little

  int64_t available(std::span<const int32_t> tokens, int64_t max) const override;
  PromptIntake propose(std::span<const DraftAsk> asks) override;
  bool guesses_are_free() const override { return true; }

  // The proposal for one sequence: up to max tokens (empty when no n-gram recurs).
  static std::vector<int32_t> lookup(std::span<const int32_t> tokens, int64_t max);

 private:
  // Where the continuation starts in tokens (the index after the matched n-gram), and how
  // long it is (up to max); {0, 0} when nothing matches.
  struct Match {
    size_t start = 0;
    int64_t length = 0;
  };
  static Match find(std::span<const int32_t> tokens, int64_t max);
};

}  // namespace nanoserve::engine
