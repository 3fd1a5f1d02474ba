// How many draft tokens each sequence checks in a step: the numbers that maximize the step's
// expected tokens per second, drafting included, from what the engine measures as it runs (the
// step's cost by rows, each sequence's acceptance, drafting's own cost and intake), not from
// constants, so that drafts are spent only where they pay on this machine and this load.
// How it decides, step by step: experiments/draft-policy.md.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nanoserve::engine {

// A forward step's time by its row count: the least-squares line through recent steps. A
// step's time is not a straight line in its rows (a few rows cost little more than one on a
// memory-bound step; past the kernels' tile of rows each costs its arithmetic), so the line is
// drawn through the steps of at least `from` rows, where the decisions lie, when they hold two
// row counts or more; else through all.
class StepTimes {
 public:
  struct Line {
    double fixed = 0, per_row = 0;
    double at(int64_t rows) const { return fixed + per_row * static_cast<double>(rows); }
  };
  // Steps of more than `max_rows` rows (prefill) are not recorded: the line is for decode steps.
  explicit StepTimes(int64_t max_rows);
  void record(int64_t rows, double seconds);
  // 0 before any step is measured; per_row is 0 until two row counts are.
  Line line(int64_t from = 1) const;
  double predict(int64_t rows, int64_t from = 1) const { return line(from).at(rows); }
  double per_row(int64_t from = 1) const { return line(from).per_row; }

 private:
  int64_t max_rows_;
  // Per row count: the recorded steps' weight and weighted time, each step weighing kForget
  // times less per newer step.
  std::vector<double> weight_, time_;
};

// Drafting's time: fixed + per_pass × passes + per_token × tokens (a draft model's passes, the
// longest draft; its rows in all, the draft tokens), the least-squares fit through recent
// drafting steps, older ones weighing less. As with StepTimes, what is not measured yet costs
// nothing (so that drafts get tried and measured): until two pass counts are measured, no cost
// per pass; until steps with more than one sequence's drafts are (passes and tokens alike),
// none per token.
class DraftingTimes {
 public:
  struct Cost {
    double fixed = 0, per_pass = 0, per_token = 0;
    double at(int64_t passes, int64_t tokens) const {
      return passes > 0 ? fixed + per_pass * static_cast<double>(passes) + per_token * static_cast<double>(tokens) : 0;
    }
  };
  void record(int64_t passes, int64_t tokens, double seconds);
  Cost cost() const;

 private:
  // Weighted sums: the weight, and of passes, tokens, seconds and their products.
  double w_ = 0, p_ = 0, t_ = 0, y_ = 0, pp_ = 0, pt_ = 0, tt_ = 0, py_ = 0, ty_ = 0;
};

class DraftPolicy {
 public:
  static constexpr int64_t kPlainEvery = 32;  // every so many steps, one without drafts

  struct Candidate {
    int slot = 0;
    int64_t available = 0;  // tokens its drafter could propose (the most it may get)
    int64_t intake = 0;     // tokens its drafter must take in first (engine/drafter.h)
    int64_t remaining = 0;  // tokens the sequence may still generate
  };

  // `max_rows`: the most rows a decode step has (every slot with its longest draft).
  // `explores`: whether a sequence drafts a token to learn its acceptance (false where the
  // engine measures it with free guesses, record_guess).
  DraftPolicy(int n_slots, int64_t max_rows, bool explores = true);

  // A new sequence in `slot`: its acceptance starts from the prior, or once the drafter has been
  // judged on others, from theirs; where theirs is next to none it starts paused, as a sequence
  // whose drafts stopped paying (it tries again later, not in its first steps).
  void start(int slot);
  // A forward step of `rows` rows took `seconds`.
  void record_step(int64_t rows, double seconds) { times_.record(rows, seconds); }
  // Drafting for a step, `rounds` tokens for its longest draft and `tokens` in all, took `seconds`.
  void record_drafting(int64_t rounds, int64_t tokens, double seconds) { drafting_.record(rounds, tokens, seconds); }
  // A drafter took in `tokens` (engine/drafter.h, PromptIntake) in `seconds`.
  void record_intake(int64_t tokens, double seconds);
  // A verify step of `slot` checked `drafted` tokens, `accepted` of them right.
  void record_verify(int slot, int64_t drafted, int64_t accepted);
  // The token `slot` would have drafted in a step where it drafted nothing was `right` or not.
  void record_guess(int slot, bool right) { record_verify(slot, 1, right ? 1 : 0); }
  // A sequence ended and freed its slot while `others_run`; a request took a slot. Whether slots
  // freed while others run are taken again before the batch runs empty (requests keep coming,
  // as from clients that send the next when one ends) says what a sequence that ends before the
  // others is worth (the batch's last one ends its steps: it is worth its tokens anyway).
  void released(bool others_run);
  void admitted();
  // Draft tokens for each candidate (in order: the batch's sequences, those that cannot draft now
  // with nothing available) in a step that yields `base_tokens` tokens
  // without drafts (a token per decoding sequence; prompts' chunks beside them do not count);
  // their sum is at most `max_extra_rows`. `sequences`: the batch's sequences, also those still
  // taking in their prompts or waiting for a slot (the decode steps to come), at least base_tokens.
  std::vector<int64_t> allocate(int64_t base_tokens, int64_t max_extra_rows, std::span<const Candidate> candidates,
                                int64_t sequences = 0);

  double acceptance(int slot) const;

 private:
  static constexpr double kPrior = 0.5;  // acceptance before any verify step, worth one judged token
  // Others' draft tokens judged before a new sequence starts from their acceptance, and the
  // acceptance below which it starts paused (kPlainEvery steps).
  static constexpr double kJudgedToKnow = 8, kHopeless = 0.05;
  struct SlotState {
    // Judged draft tokens and the accepted ones, older ones weighing less (the prior too).
    double accepted = kPrior, trials = 1;
    int64_t pause = 0;                // steps left without drafting
    int64_t next_pause = 1;           // the pause the next time drafts do not pay
    bool explore = true;              // draft all that is offered next time (to measure acceptance)
    double offered = 0;               // the tokens its drafter offered lately, older steps weighing less
  };
  // What a token each candidate's drafts gain is worth, in tokens of a step of `rows` rows and
  // `tokens` tokens. A whole token while it would end the batch's steps without drafts: for as
  // many tokens as it has left beyond every other's steps left (at the tokens a step gives each
  // with what its drafter lately offered checked: a lookup finds a match in one step and not in
  // the next; a text with nothing to find gives a token a step). Past them the sequence ends
  // sooner but the steps go on: its token spares a row of a step taken anyway (a row's share of
  // a token's cost), unless its slot is taken again at once (requests keep coming): a token.
  struct Worth {
    int64_t whole = 0;  // its first draft tokens worth a whole token
    double beyond = 1;  // the worth of each after them
  };
  std::vector<Worth> worth(std::span<const Candidate> candidates, const StepTimes::Line& step, int64_t rows,
                           double tokens) const;
  // The drafts for each candidate with drafts of at most `longest` tokens (one at a time to the
  // next token worth the most, its chance times its worth, while its row pays for itself);
  // returns the expected tokens, each weighed by its worth. per_token: what drafting a token
  // costs besides its row.
  double fill(const StepTimes::Line& step, double per_token, int64_t longest, int64_t base_rows, double base_tokens,
              int64_t max_extra_rows, std::span<const Candidate> candidates, const std::vector<bool>& eligible,
              const std::vector<double>& accept, const std::vector<Worth>& worth, std::vector<int64_t>& drafts) const;
  // The share of c's intake that a step which drafts `rows` tokens for it is charged.
  double intake_share(const Candidate& c, int64_t rows) const;
  // Whether drafting for c could pay in a step of `rows` rows and `tokens` tokens: with all
  // that its drafter offers right (before a sequence with an intake explores).
  bool could_pay(const Candidate& c, const StepTimes::Line& step, const DraftingTimes::Cost& drafting, int64_t rows,
                 double tokens) const;
  // c drafts nothing for a while: a pause, twice as long as its last.
  static void pause(SlotState& s);
  // The share of slots freed while others ran that were taken again before the batch ran empty
  // (recent ones weigh more).
  double refills() const { return refilled_ / releases_; }
  // One slot freed while others ran is settled: taken again before the batch ran empty, or not.
  void count_release(bool taken_again);

  StepTimes times_;
  DraftingTimes drafting_;
  double intake_tokens_ = 0, intake_seconds_ = 0;  // recent intakes, older ones weighing less
  std::vector<SlotState> slots_;
  double accepted_all_ = 0, judged_all_ = 0;  // every sequence's verify outcomes, older weighing less
  bool explores_;
  int64_t steps_since_plain_ = 0;  // allocations since one that gave no drafts
  int64_t open_releases_ = 0;           // slots freed while others ran, not taken again yet
  double refilled_ = 1, releases_ = 1;  // weighted; the prior: requests keep coming
};

}  // namespace nanoserve::engine
