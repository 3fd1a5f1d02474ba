// The draft policy hands out draft rows while the step's expected tokens grow faster than its
// measured time: many on a step whose time hardly grows with rows (memory-bound), none where
// time grows with every row (compute-bound); the likeliest sequence first; a sequence whose
// drafts do not pay (wrong, or right but too dear) pauses, longer each time, and drafts again
// once they pay.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "engine/draft_policy.h"

namespace nanoserve::engine {
namespace {

using Candidate = DraftPolicy::Candidate;

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// Step times t(rows) = base + per_row × rows, for rows 1..64.
void teach(DraftPolicy& p, double base, double per_row) {
  for (int64_t rows = 1; rows <= 64; ++rows) p.record_step(rows, base + per_row * static_cast<double>(rows));
}

TEST(StepTimes, ALineThroughRecentStepsOfDecodeSize) {
  StepTimes t(16);
  EXPECT_EQ(t.predict(4), 0.0);  // nothing measured
  for (int i = 0; i < 3; ++i) t.record(1, 0.010);
  EXPECT_EQ(t.per_row(), 0.0);  // one row count: rows cost nothing yet
  EXPECT_DOUBLE_EQ(t.predict(5), 0.010);
  for (int64_t rows = 2; rows <= 8; ++rows) t.record(rows, 0.008 + 0.002 * static_cast<double>(rows));
  t.record(1, 0.010);
  EXPECT_NEAR(t.per_row(), 0.002, 1e-9);
  EXPECT_NEAR(t.predict(12), 0.032, 1e-9);
  t.record(400, 10.0);  // a prefill step: not a decode step's size
  EXPECT_NEAR(t.predict(12), 0.032, 1e-9);
  // Recent steps weigh more: the line follows a machine that became slower.
  for (int i = 0; i < 200; ++i)
    for (int64_t rows = 1; rows <= 4; ++rows) t.record(rows, 0.020 + 0.001 * static_cast<double>(rows));
  EXPECT_NEAR(t.predict(2), 0.022, 1e-4);
}

// Drafting's time is fitted as a fixed part, a cost per pass and one per draft token; what is
// not measured costs nothing yet: one pass count measured, all of it fixed; passes and tokens
// alike (one sequence's drafts), no cost per token; once steps that drafted for several are
// measured, the fit finds every part.
TEST(DraftingTimes, AFixedPartACostPerPassAndOnePerDraftToken) {
  DraftingTimes t;
  EXPECT_EQ(t.cost().at(4, 4), 0.0);  // nothing measured
  t.record(1, 1, 0.004);
  EXPECT_NEAR(t.cost().at(8, 8), 0.004, 1e-12);
  for (int64_t passes = 1; passes <= 8; ++passes)
    t.record(passes, passes, 0.001 + 0.003 * static_cast<double>(passes));
  EXPECT_NEAR(t.cost().per_pass, 0.003, 1e-9);
  EXPECT_NEAR(t.cost().fixed, 0.001, 1e-9);
  EXPECT_EQ(t.cost().per_token, 0.0);
  for (int i = 0; i < 100; ++i)
    for (int64_t passes = 1; passes <= 8; ++passes)
      for (int64_t sequences : {1, 3, 8}) {
        const int64_t tokens = passes * sequences;
        t.record(passes, tokens, 0.0005 + 0.001 * static_cast<double>(passes) + 0.0004 * static_cast<double>(tokens));
      }
  EXPECT_NEAR(t.cost().fixed, 0.0005, 1e-6);
  EXPECT_NEAR(t.cost().per_pass, 0.001, 1e-6);
  EXPECT_NEAR(t.cost().per_token, 0.0004, 1e-6);
  EXPECT_NEAR(t.cost().at(8, 64), 0.0005 + 0.008 + 0.0256, 1e-5);
  EXPECT_EQ(t.cost().at(0, 0), 0.0);
  t.record(0, 0, 1.0);  // no pass: nothing to learn
  EXPECT_NEAR(t.cost().per_token, 0.0004, 1e-6);
}

// A step's time bends upward past the kernels' tile of rows: the line from 8 rows on follows
// that part's slope, not the whole range's; with one row count measured there, the whole range's.
TEST(StepTimes, ALineFromTheRowsWhereTheDecisionsLie) {
  StepTimes t(64);
  for (int i = 0; i < 5; ++i) {
    for (int64_t rows = 1; rows <= 8; ++rows) t.record(rows, 0.020 + 0.0005 * static_cast<double>(rows));
  }
  const double whole = t.per_row(1);
  EXPECT_NEAR(whole, 0.0005, 1e-9);
  EXPECT_NEAR(t.per_row(8), whole, 1e-12);  // only 8 rows measured from 8 on
  for (int i = 0; i < 5; ++i)
    for (int64_t rows = 9; rows <= 12; ++rows) t.record(rows, 0.024 + 0.003 * static_cast<double>(rows - 8));
  EXPECT_NEAR(t.per_row(9), 0.003, 1e-9);
  EXPECT_GT(t.per_row(8), 0.002);
  EXPECT_LT(t.per_row(1), 0.002);
  EXPECT_NEAR(t.predict(13, 9), 0.024 + 0.003 * 5, 1e-9);
}

// Clears a new sequence's first, exploring draft (one token).
void explore(DraftPolicy& p, int slot) {
  const std::vector<Candidate> c = {{.slot = slot, .available = 1}};
  EXPECT_EQ(p.allocate(1, 63, c)[0], 1);
}

TEST(DraftPolicy, DraftsAsFarAsPaysOnAMemoryBoundStepAndNotAtAllOnAComputeBoundOne) {
  DraftPolicy cheap(2, 64);
  teach(cheap, 0.020, 0.0002);  // a row costs 1% of a step
  const std::vector<Candidate> c = {{.slot = 0, .available = 8}};
  explore(cheap, 0);
  for (int i = 0; i < 3; ++i) cheap.record_verify(0, 8, 8);  // everything accepted lately
  EXPECT_GT(cheap.acceptance(0), 0.8);
  EXPECT_EQ(cheap.allocate(1, 63, c), (std::vector<int64_t>{8}));

  DraftPolicy dear(2, 64);
  teach(dear, 0.0, 0.010);  // every row costs a whole step
  explore(dear, 0);
  for (int i = 0; i < 3; ++i) dear.record_verify(0, 8, 8);
  EXPECT_EQ(dear.allocate(1, 63, c), (std::vector<int64_t>{0}));
}

TEST(DraftPolicy, TheLikeliestSequenceGetsRowsFirstAndTheBudgetHolds) {
  DraftPolicy p(3, 64);
  teach(p, 0.020, 0.001);  // 5% a row: worth it only for likely tokens
  explore(p, 0);
  explore(p, 1);
  for (int i = 0; i < 5; ++i) {
    p.record_verify(0, 4, 4);  // slot 0: always right
    p.record_verify(1, 4, 0);  // slot 1: always wrong
  }
  const std::vector<Candidate> c = {{.slot = 1, .available = 8}, {.slot = 0, .available = 8}};
  const std::vector<int64_t> got = p.allocate(2, 63, c);
  EXPECT_EQ(got[0], 0);
  EXPECT_GT(got[1], 2);
  const std::vector<int64_t> capped = p.allocate(2, 3, c);
  EXPECT_LE(sum(capped), 3);
  // Never more than a drafter can give.
  const std::vector<Candidate> short_one = {{.slot = 0, .available = 2}};
  EXPECT_EQ(p.allocate(1, 63, short_one), (std::vector<int64_t>{2}));
}

TEST(DraftPolicy, DraftsThatDoNotPayPauseLongerEachTimeAndResumeWhenAccepted) {
  DraftPolicy p(1, 64);
  teach(p, 0.020, 0.0006);  // 3% a row
  const std::vector<Candidate> c = {{.slot = 0, .available = 4}};
  int64_t drafting_steps = 0, steps = 0;
  std::vector<int64_t> draft_steps;  // when it drafted
  for (; steps < 600; ++steps) {
    const int64_t n = p.allocate(1, 63, c)[0];
    if (n > 0) {
      ++drafting_steps;
      draft_steps.push_back(steps);
      p.record_verify(0, n, 0);  // never right
    }
  }
  // A few tries at first, then ever rarer: well under a sixth of the steps draft.
  EXPECT_GT(drafting_steps, 2);
  EXPECT_LT(drafting_steps, 90);
  int64_t longest_pause = 0;
  for (size_t k = 1; k < draft_steps.size(); ++k) longest_pause = std::max(longest_pause, draft_steps[k] - draft_steps[k - 1]);
  EXPECT_GT(longest_pause, 100);  // the pauses grew

  // A new sequence after so many wrong drafts starts paused: it tries after kPlainEvery steps
  // (not in its first), and once right it keeps drafting.
  p.start(0);
  int64_t first_try = 0;
  while (p.allocate(1, 63, c)[0] == 0 && first_try < 100) ++first_try;
  EXPECT_EQ(first_try, DraftPolicy::kPlainEvery);
  for (int i = 0; i < 5; ++i) p.record_verify(0, 4, 4);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(p.allocate(1, 63, c)[0], 4);
}

// A new sequence starts from the others' acceptance: where theirs is high it drafts at once as far
// as pays, where it is about 0 (a drafter that cannot guess this text, or random weights) it does
// not spend its first steps' rows relearning it.
TEST(DraftPolicy, ANewSequenceStartsFromTheOthersAcceptance) {
  const std::vector<Candidate> c = {{.slot = 1, .available = 4}};
  DraftPolicy right(2, 64), wrong(2, 64);
  for (DraftPolicy* p : {&right, &wrong}) teach(*p, 0.020, 0.0006);
  for (int i = 0; i < 10; ++i) right.record_verify(0, 4, 4), wrong.record_verify(0, 1, 0);
  right.start(1);
  wrong.start(1);
  EXPECT_EQ(right.allocate(1, 63, c)[0], 4);  // all it is offered, from its first step
  for (int step = 0; step < 10; ++step) EXPECT_EQ(wrong.allocate(1, 63, c)[0], 0) << step;
  EXPECT_NEAR(wrong.acceptance(1), 0.0, 1e-9);
}

// Eight sequences on a step whose every row costs as much as a token's share (time ∝ rows):
// their exploring drafts are all right, yet a draft never pays, so each pauses longer each
// time rather than exploring again at once (a right draft alone does not end the pauses).
TEST(DraftPolicy, RightDraftsThatDoNotPayStillPauseLongerEachTime) {
  DraftPolicy p(8, 72);
  teach(p, 0.0, 0.003);
  std::vector<Candidate> c;
  for (int slot = 0; slot < 8; ++slot) c.push_back({.slot = slot, .available = 4});
  int64_t draft_rows = 0;
  for (int step = 0; step < 600; ++step) {
    const std::vector<int64_t> d = p.allocate(8, 64, c);
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] == 0) continue;
      draft_rows += d[i];
      p.record_verify(c[i].slot, d[i], d[i]);  // always right
    }
  }
  // Each sequence explores about log2(600) times, not every other step.
  EXPECT_GT(draft_rows, 8);
  EXPECT_LT(draft_rows, 8 * 16);
}

// Where guesses cost nothing (prompt lookup), no row is spent to learn a sequence's acceptance:
// on a step where a draft at the prior's acceptance does not pay (8 rows, a row +9%), nobody
// drafts until the guesses it would have drafted show it right, and the sequences whose guesses
// are wrong never draft.
TEST(DraftPolicy, WithFreeGuessesAcceptanceIsLearnedWithoutARow) {
  DraftPolicy p(8, 72, /*explores=*/false);
  teach(p, 0.010, 0.003);
  std::vector<Candidate> c;
  for (int slot = 0; slot < 8; ++slot) c.push_back({.slot = slot, .available = 4});
  EXPECT_EQ(sum(p.allocate(8, 64, c)), 0);  // no exploring row
  int64_t right_rows = 0, wrong_rows = 0;
  for (int step = 0; step < 100; ++step) {
    const std::vector<int64_t> d = p.allocate(8, 64, c);
    for (size_t i = 0; i < d.size(); ++i) {
      const bool right = c[i].slot == 0;
      (right ? right_rows : wrong_rows) += d[i];
      if (d[i] > 0)
        p.record_verify(c[i].slot, d[i], right ? d[i] : 0);
      else
        p.record_guess(c[i].slot, right);
    }
  }
  EXPECT_GT(p.acceptance(0), 0.9);
  EXPECT_GT(right_rows, 100);
  EXPECT_EQ(wrong_rows, 0);
}

// A sequence that would not end the batch's steps even without drafts spares, by ending sooner,
// only its own rows of steps that the others take anyway: not worth a draft row that may be
// wrong, unless a request takes its slot at once (requests keep coming). One that ends the
// steps drafts; a sequence in its prompt, with nothing to draft, has its tokens left too.
TEST(DraftPolicy, DraftsPayWhereTheyEndTheBatchSoonerOrFreeASlotSomeoneTakes) {
  const auto learned = [](DraftPolicy& p) {
    teach(p, 0.020, 0.001);  // 5% a row: 8 rows cost 0.028 s, a token 0.0035 s, a row 0.001 s
    for (int i = 0; i < 5; ++i) p.record_guess(0, true), p.record_guess(1, true);  // both right lately
  };
  const auto nobody_takes_freed_slots = [](DraftPolicy& p) {  // rounds of 8 that start together
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 8; ++i) p.admitted();
      for (int i = 0; i < 7; ++i) p.released(/*others_run=*/true);
      p.released(/*others_run=*/false);
    }
  };
  DraftPolicy p(8, 72, /*explores=*/false);
  learned(p);
  nobody_takes_freed_slots(p);
  // Slot 2 (nothing to draft) has 30 tokens left: slot 0's 20 end before it, slot 1's 40 after.
  const std::vector<Candidate> c = {{.slot = 0, .available = 4, .remaining = 20},
                                    {.slot = 1, .available = 4, .remaining = 40},
                                    {.slot = 2, .available = 0, .remaining = 30}};
  std::vector<int64_t> d = p.allocate(8, 64, c);
  EXPECT_EQ(d[0], 0);
  EXPECT_GT(d[1], 0);
  // Still none a step later: it was not paused for it, and still does not end the batch.
  EXPECT_EQ(p.allocate(8, 64, c)[0], 0);
  // Once ahead of the one that cannot draft, the other stops too; tied with it, it ends nothing.
  d = p.allocate(8, 64, std::vector<Candidate>{{.slot = 1, .available = 4, .remaining = 30},
                                               {.slot = 2, .available = 0, .remaining = 30}});
  EXPECT_EQ(d[0], 0);
  // Two that both draft well, tied: each ends the steps unless it drafts (as 8 streams started
  // together on text that repeats).
  d = p.allocate(8, 64, std::vector<Candidate>{{.slot = 0, .available = 4, .remaining = 30},
                                               {.slot = 1, .available = 4, .remaining = 30}});
  EXPECT_GT(d[0], 0);
  EXPECT_GT(d[1], 0);
  for (int i = 0; i < 12; ++i) {  // requests that take each freed slot while the others run
    p.released(/*others_run=*/true);
    p.admitted();
  }
  d = p.allocate(8, 64, c);
  EXPECT_GT(d[0], 0);
  EXPECT_GT(d[1], 0);
}

// A draft model's passes cost time of their own: on a step that a row hardly slows, drafts pay
// while a pass is cheap beside the step, and not when a pass costs as much as the step.
TEST(DraftPolicy, DraftingTimeCountsByItsPasses) {
  const std::vector<Candidate> c = {{.slot = 0, .available = 8}, {.slot = 1, .available = 8}};
  for (const auto& [pass, pays] : std::vector<std::pair<double, bool>>{{0.001, true}, {0.030, false}}) {
    DraftPolicy p(2, 64);
    teach(p, 0.020, 0.0001);
    for (int64_t rounds = 1; rounds <= 8; ++rounds) p.record_drafting(rounds, rounds, 0.0005 + pass * static_cast<double>(rounds));
    explore(p, 0);
    explore(p, 1);
    for (int i = 0; i < 5; ++i) p.record_verify(0, 4, 3), p.record_verify(1, 4, 3);  // 0.75 accepted
    const std::vector<int64_t> got = p.allocate(2, 62, c);
    EXPECT_EQ(sum(got) > 0, pays) << "a pass of " << pass << " s";
    if (pays) {
      EXPECT_GE(got[0], 2);
    }
  }
}

// A draft model must take in a sequence's prompt before its first draft. Where its passes cost
// as much as the model's step (a draft model as dear as the model), no draft could pay even if
// every token were right, so a new sequence does not explore (no prefill of its prompt), and
// tries again after pauses that double; one with nothing to take in explores as before, and so
// does one whose drafts could pay.
TEST(DraftPolicy, ASequenceWhoseDrafterMustTakeInItsPromptExploresOnlyWhereDraftingCouldPay) {
  const auto policy = [](double pass) {
    DraftPolicy p(2, 64);
    teach(p, 0.020, 0.0002);  // memory-bound: a row costs 1% of a step
    for (int64_t rounds = 1; rounds <= 8; ++rounds) p.record_drafting(rounds, rounds, pass * static_cast<double>(rounds));
    p.record_intake(512, 0.025);
    return p;
  };
  const Candidate with_prompt = {.slot = 0, .available = 8, .intake = 512, .remaining = 256};
  const Candidate without = {.slot = 1, .available = 8, .intake = 0, .remaining = 256};

  DraftPolicy dear = policy(0.020);
  int explored = 0;
  for (int step = 0; step < 300; ++step) explored += dear.allocate(1, 63, std::vector<Candidate>{with_prompt})[0] > 0;
  EXPECT_EQ(explored, 0);
  EXPECT_EQ(dear.allocate(1, 63, std::vector<Candidate>{without}), (std::vector<int64_t>{1}));

  DraftPolicy cheap = policy(0.0002);
  EXPECT_GE(cheap.allocate(1, 63, std::vector<Candidate>{with_prompt})[0], 1);
}

// Whether a sequence with an intake explores is judged on the decode steps of the whole batch:
// where one sequence decodes while seven take in their prompts, drafting that would pay beside
// one decode row (a row a tenth of the step's fixed part) does not beside eight, so it does not
// explore (no prefill on the draft model); alone in the batch, it does.
TEST(DraftPolicy, ExploringIsJudgedOnTheDecodeStepsOfTheWholeBatch) {
  const auto policy = [] {
    DraftPolicy p(8, 128);
    teach(p, 0.002, 0.0002);
    for (int64_t rounds = 1; rounds <= 8; ++rounds) p.record_drafting(rounds, rounds, 0.0002 * static_cast<double>(rounds));
    p.record_intake(512, 0.025);
    return p;
  };
  const std::vector<Candidate> c = {{.slot = 0, .available = 8, .intake = 512, .remaining = 256}};
  DraftPolicy batch = policy();
  EXPECT_EQ(batch.allocate(1, 63, c, /*sequences=*/8)[0], 0);
  DraftPolicy alone = policy();
  EXPECT_EQ(alone.allocate(1, 63, c, /*sequences=*/1)[0], 1);
}

// A sequence that always drafts still leaves a step without drafts now and then, so that the
// step's time without them stays measured.
TEST(DraftPolicy, EveryFewStepsOneDraftsNothing) {
  DraftPolicy p(1, 64);
  teach(p, 0.020, 0.0001);
  explore(p, 0);
  const std::vector<Candidate> c = {{.slot = 0, .available = 4}};
  int plain = 0;
  for (int step = 0; step < 4 * DraftPolicy::kPlainEvery; ++step) {
    const int64_t n = p.allocate(1, 63, c)[0];
    if (n == 0) ++plain;
    p.record_verify(0, n, n);
  }
  EXPECT_EQ(plain, 4);
}

TEST(DraftPolicy, ANewSequenceDraftsOneTokenFirstAndDraftsBeforeStepsAreMeasured) {
  DraftPolicy p(2, 64);
  teach(p, 0.0, 0.010);  // compute-bound: no draft pays at the prior's acceptance
  const std::vector<Candidate> c = {{.slot = 0, .available = 3}};
  EXPECT_EQ(p.allocate(1, 63, c), (std::vector<int64_t>{1}));  // exploring
  EXPECT_EQ(p.allocate(1, 63, c), (std::vector<int64_t>{0}));
  EXPECT_EQ(p.allocate(1, 0, std::vector<Candidate>{{.slot = 1, .available = 5}}), (std::vector<int64_t>{0}));

  DraftPolicy fresh(1, 64);  // no step measured: a row costs nothing yet
  explore(fresh, 0);
  EXPECT_EQ(fresh.allocate(1, 63, c), (std::vector<int64_t>{3}));
}

// A draft model drafting for 8 sequences at once runs its passes over 8 rows: where its rows
// cost as the model's own do (a draft model as dear as the model, compute-bound), drafts that
// pay for one sequence do not pay for eight, which the fit per pass alone (one sequence's
// drafting times, taken for the whole step's) would hand out.
TEST(DraftPolicy, DraftsForManySequencesCostTheirRowsOnTheDraftModel) {
  std::vector<Candidate> eight;
  for (int slot = 0; slot < 8; ++slot) eight.push_back({.slot = slot, .available = 8});
  const auto drafts_for_eight = [&](bool seen_many) {
    DraftPolicy p(8, 128);
    teach(p, 0.002, 0.0002);  // a row costs a tenth of the step's fixed part
    for (int i = 0; i < 20; ++i)
      for (int64_t passes = 1; passes <= 8; ++passes)
        for (int64_t sequences : seen_many ? std::vector<int64_t>{1, 8} : std::vector<int64_t>{1}) {
          const int64_t tokens = passes * sequences;
          p.record_drafting(passes, tokens, 0.0002 * static_cast<double>(passes) + 0.0002 * static_cast<double>(tokens));
        }
    for (const Candidate& c : eight) {
      explore(p, c.slot);
      for (int i = 0; i < 5; ++i) p.record_verify(c.slot, 4, 3);  // 0.75 accepted
    }
    return sum(p.allocate(8, 120, eight));
  };
  EXPECT_GE(drafts_for_eight(false), 8);  // per pass alone: drafts look cheap
  EXPECT_EQ(drafts_for_eight(true), 0);
  // One sequence alone still drafts: a pass over one row is cheap beside its step.
  DraftPolicy alone(1, 128);
  teach(alone, 0.002, 0.0002);
  for (int i = 0; i < 20; ++i)
    for (int64_t passes = 1; passes <= 8; ++passes)
      for (int64_t sequences : {1, 8})
        alone.record_drafting(passes, passes * sequences,
                              0.0002 * static_cast<double>(passes) + 0.0002 * static_cast<double>(passes * sequences));
  explore(alone, 0);
  for (int i = 0; i < 5; ++i) alone.record_verify(0, 4, 3);
  EXPECT_GE(sum(alone.allocate(1, 63, std::vector<Candidate>{{.slot = 0, .available = 8}})), 2);
}

}  // namespace
}  // namespace nanoserve::engine
