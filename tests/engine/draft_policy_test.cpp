// The draft policy hands out draft rows while the step's expected tokens grow faster than its
// measured time: many on a step whose time hardly grows with rows (memory-bound), none where
// time grows with every row (compute-bound); the likeliest sequence first; a sequence whose
// drafts do not pay pauses, longer each time, and drafts again once they pay.
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

TEST(StepTimes, AveragesPerRowCountAndNeverPredictsLessForMoreRows) {
  StepTimes t(16);
  EXPECT_EQ(t.predict(4), 0.0);  // nothing measured
  t.record(1, 0.010);
  t.record(4, 0.008);  // noise: less than one row
  EXPECT_DOUBLE_EQ(t.predict(1), 0.010);
  EXPECT_DOUBLE_EQ(t.predict(3), 0.010);  // not measured: the nearest smaller count's
  EXPECT_DOUBLE_EQ(t.predict(4), 0.010);
  t.record(4, 0.020);
  EXPECT_NEAR(t.predict(4), 0.008 + 0.2 * (0.020 - 0.008), 1e-12);
  EXPECT_DOUBLE_EQ(t.predict(100), t.predict(16));  // beyond the largest count: the largest's
}

TEST(DraftPolicy, DraftsAsFarAsPaysOnAMemoryBoundStepAndNotAtAllOnAComputeBoundOne) {
  DraftPolicy cheap(2, 64);
  teach(cheap, 0.020, 0.0002);  // a row costs 1% of a step
  const std::vector<Candidate> c = {{.slot = 0, .available = 8}};
  for (int i = 0; i < 3; ++i) cheap.record_verify(0, 8, 8);  // everything accepted lately
  EXPECT_GT(cheap.acceptance(0), 0.8);
  EXPECT_EQ(cheap.allocate(1, 1, 63, c), (std::vector<int64_t>{8}));

  DraftPolicy dear(2, 64);
  teach(dear, 0.0, 0.010);  // every row costs a whole step
  for (int i = 0; i < 3; ++i) dear.record_verify(0, 8, 8);
  EXPECT_EQ(dear.allocate(1, 1, 63, c), (std::vector<int64_t>{0}));
}

TEST(DraftPolicy, TheLikeliestSequenceGetsRowsFirstAndTheBudgetHolds) {
  DraftPolicy p(3, 64);
  teach(p, 0.020, 0.001);  // 5% a row: worth it only for likely tokens
  for (int i = 0; i < 5; ++i) {
    p.record_verify(0, 4, 4);  // slot 0: always right
    p.record_verify(1, 4, 0);  // slot 1: always wrong
  }
  const std::vector<Candidate> c = {{.slot = 1, .available = 8}, {.slot = 0, .available = 8}};
  const std::vector<int64_t> got = p.allocate(2, 2, 63, c);
  EXPECT_EQ(got[0], 0);
  EXPECT_GT(got[1], 2);
  const std::vector<int64_t> capped = p.allocate(2, 2, 3, c);
  EXPECT_LE(sum(capped), 3);
  // Never more than a drafter can give.
  const std::vector<Candidate> short_one = {{.slot = 0, .available = 2}};
  EXPECT_EQ(p.allocate(1, 1, 63, short_one), (std::vector<int64_t>{2}));
}

TEST(DraftPolicy, DraftsThatDoNotPayPauseLongerEachTimeAndResumeWhenAccepted) {
  DraftPolicy p(1, 64);
  teach(p, 0.020, 0.0006);  // 3% a row
  const std::vector<Candidate> c = {{.slot = 0, .available = 4}};
  int64_t drafting_steps = 0, steps = 0;
  std::vector<int64_t> draft_steps;  // when it drafted
  for (; steps < 600; ++steps) {
    const int64_t n = p.allocate(1, 1, 63, c)[0];
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

  // Once right, it drafts again soon and keeps drafting.
  p.start(0);
  EXPECT_GT(p.allocate(1, 1, 63, c)[0], 0);
  for (int i = 0; i < 5; ++i) p.record_verify(0, 4, 4);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(p.allocate(1, 1, 63, c)[0], 4);
}

TEST(DraftPolicy, DraftsBeforeAnyStepIsMeasured) {
  DraftPolicy p(1, 64);
  const std::vector<Candidate> c = {{.slot = 0, .available = 3}};
  EXPECT_EQ(p.allocate(1, 1, 63, c), (std::vector<int64_t>{3}));  // it must draft to learn what drafts cost
}

}  // namespace
}  // namespace nanoserve::engine
