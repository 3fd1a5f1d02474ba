// How many draft tokens each sequence checks in a step: the numbers that maximize the step's
// expected tokens per second, from two measurements, not constants.
//
// - The step's cost by its row count: a forward step reads the weights once whatever its rows,
//   so on a memory-bound machine a few more rows cost little (measured by the step times
//   themselves, an average per row count; a row count not measured yet costs what the nearest
//   smaller one does, so that it gets measured).
// - Each sequence's acceptance: the chance that its next draft token is right, from its recent
//   verify steps (a token is accepted only after every one before it was, so a draft of k adds
//   a + a² + ... + a^k tokens on average).
//
// Drafts are handed out one token at a time to the sequence whose next one is most likely
// accepted, while the expected tokens grow faster than the step's time. A sequence whose drafts
// stop paying stops drafting and tries again after a pause that doubles each time it still does
// not pay (and resets when a draft is accepted), so a text that never repeats costs a draft
// row only now and then.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoserve::engine {

// The average time of a forward step by its row count.
class StepTimes {
 public:
  explicit StepTimes(int64_t max_rows);
  void record(int64_t rows, double seconds);
  // Never less than a smaller row count's time; 0 before any step is measured.
  double predict(int64_t rows) const;

 private:
  std::vector<double> mean_;  // per row count; 0: not measured yet
};

class DraftPolicy {
 public:
  struct Candidate {
    int slot = 0;
    int64_t available = 0;  // tokens its drafter could propose (the most it may get)
  };

  DraftPolicy(int n_slots, int64_t max_rows);

  // A new sequence in `slot`: acceptance back to the prior, no pause.
  void start(int slot);
  // A forward step of `rows` rows took `seconds`.
  void record_step(int64_t rows, double seconds) { times_.record(rows, seconds); }
  // A verify step of `slot` checked `drafted` tokens, `accepted` of them right.
  void record_verify(int slot, int64_t drafted, int64_t accepted);
  // Draft tokens for each candidate (in order) in a step that has `base_rows` rows and yields
  // `base_tokens` tokens without drafts (a token per decoding sequence); their sum is at most
  // `max_extra_rows`.
  std::vector<int64_t> allocate(int64_t base_rows, int64_t base_tokens, int64_t max_extra_rows,
                                std::span<const Candidate> candidates);

  double acceptance(int slot) const;

 private:
  static constexpr double kPrior = 0.5;  // acceptance before any verify step, worth one judged token
  struct SlotState {
    // Judged draft tokens and the accepted ones, older ones weighing less (the prior too).
    double accepted = kPrior, trials = 1;
    int64_t pause = 0;                // steps left without drafting
    int64_t next_pause = 1;           // the pause the next time drafts do not pay
  };
  StepTimes times_;
  std::vector<SlotState> slots_;
};

}  // namespace nanoserve::engine
