// The batching policy without a model: decode rows first, prefill chunks under the token
// budget, first-come-first-served admission by slots and free blocks, and preemption of the
// newest sequence when the pool runs short. A simulated workload checks the invariants over
// thousands of steps: the pool is never overdrawn, everyone finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/scheduler.h"

namespace nanoserve::engine {
namespace {

SequenceView running(uint64_t arrival, int64_t tokens, int64_t cached, int64_t blocks) {
  return {.arrival = arrival, .tokens = tokens, .cached = cached, .blocks = blocks};
}
SequenceView waiting(uint64_t arrival, int64_t tokens) { return {.arrival = arrival, .tokens = tokens}; }

std::vector<std::pair<size_t, int64_t>> chunks(const StepPlan& plan) {
  std::vector<std::pair<size_t, int64_t>> out;
  for (const auto& c : plan.chunks) out.emplace_back(c.seq, c.n);
  return out;
}

using Chunks = std::vector<std::pair<size_t, int64_t>>;

TEST(Scheduler, RefusesLimitsThatCannotWork) {
  EXPECT_THROW(Scheduler({.max_running = 0}), std::invalid_argument);
  EXPECT_THROW(Scheduler({.max_running = 8, .step_tokens = 4}), std::invalid_argument);
  EXPECT_THROW(Scheduler({.max_running = 1, .step_tokens = 1, .block_size = 0}), std::invalid_argument);
  EXPECT_NO_THROW(Scheduler({.max_running = 4, .step_tokens = 4, .block_size = 1}));
}

TEST(Scheduler, DecodeRowsFirstOldestFirstThenPrefillUnderTheBudget) {
  const Scheduler s({.max_running = 4, .step_tokens = 10, .block_size = 4});
  // 0: decoding (newer), 1: prefilling 20 tokens, 2: decoding (oldest).
  const std::vector<SequenceView> run = {running(5, 9, 8, 2), running(3, 20, 4, 1), running(1, 30, 29, 8)};
  const StepPlan plan = s.plan(run, {}, 100);
  EXPECT_TRUE(plan.preempted.empty());
  EXPECT_EQ(chunks(plan), (Chunks{{2, 1}, {0, 1}, {1, 8}}));
  EXPECT_EQ(plan.rows, 10);
}

TEST(Scheduler, ALongPromptIsChunkedWhileTheOthersKeepDecoding) {
  const Scheduler s({.max_running = 4, .step_tokens = 8, .block_size = 16});
  std::vector<SequenceView> run = {running(1, 5, 4, 1), running(2, 7, 6, 1)};
  const std::vector<SequenceView> wait = {waiting(3, 100)};
  StepPlan plan = s.plan(run, wait, 100);
  EXPECT_EQ(plan.admitted, 1u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}, {1, 1}, {2, 6}}));
  // Next steps: the two keep one row each, the prompt takes the other six.
  run.push_back(running(3, 100, 6, 1));
  run[0].tokens++, run[0].cached++, run[1].tokens++, run[1].cached++;
  plan = s.plan(run, {}, 99);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}, {1, 1}, {2, 6}}));
}

TEST(Scheduler, AdmissionIsFirstComeFirstServedBySlotsAndBlocks) {
  const Scheduler s({.max_running = 3, .step_tokens = 64, .block_size = 4});
  // The head needs 10 blocks; 9 are free: nobody behind it is admitted either.
  const std::vector<SequenceView> wait = {waiting(1, 40), waiting(2, 4), waiting(3, 4)};
  StepPlan plan = s.plan({}, wait, 9);
  EXPECT_EQ(plan.admitted, 0u);
  EXPECT_TRUE(plan.chunks.empty());
  plan = s.plan({}, wait, 11);  // the head fits, then one more, then the blocks run out
  EXPECT_EQ(plan.admitted, 2u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 40}, {1, 4}}));
  plan = s.plan({}, wait, 100);
  EXPECT_EQ(plan.admitted, 3u);
  const std::vector<SequenceView> full = {running(0, 5, 4, 2), running(0, 5, 4, 2), running(0, 5, 4, 2)};
  EXPECT_EQ(s.plan(full, wait, 100).admitted, 0u);
}

TEST(Scheduler, AdmissionWaitsWhileRunningPrefillsTakeTheWholeBudget) {
  const Scheduler s({.max_running = 4, .step_tokens = 8, .block_size = 4});
  const std::vector<SequenceView> run = {running(1, 40, 8, 2)};
  const std::vector<SequenceView> wait = {waiting(2, 4)};
  StepPlan plan = s.plan(run, wait, 100);
  EXPECT_EQ(plan.admitted, 0u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 8}}));
  // With budget left over, the waiting one starts in the same step.
  const std::vector<SequenceView> almost = {running(1, 40, 36, 9)};
  plan = s.plan(almost, wait, 100);
  EXPECT_EQ(plan.admitted, 1u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 4}, {1, 4}}));
}

TEST(Scheduler, AnOlderSequenceShortOfBlocksPreemptsTheNewest) {
  const Scheduler s({.max_running = 4, .step_tokens = 16, .block_size = 4});
  // The oldest (arrival 1) needs a fifth block; none is free. The newest (arrival 7) gives way
  // before the middle one (arrival 4); nothing is admitted in a step that preempts.
  const std::vector<SequenceView> run = {running(4, 9, 8, 3), running(1, 17, 16, 4), running(7, 5, 4, 1)};
  const StepPlan plan = s.plan(run, std::vector{waiting(9, 1)}, 0);
  EXPECT_EQ(plan.preempted, (std::vector<size_t>{2}));
  EXPECT_EQ(plan.admitted, 0u);
  // The middle one needs no new block for its row.
  EXPECT_EQ(chunks(plan), (Chunks{{1, 1}, {0, 1}}));
}

TEST(Scheduler, TheNewestDecoderShortOfBlocksPreemptsItself) {
  const Scheduler s({.max_running = 2, .step_tokens = 4, .block_size = 4});
  const std::vector<SequenceView> run = {running(1, 5, 4, 2), running(2, 9, 8, 2)};
  const StepPlan plan = s.plan(run, {}, 0);
  EXPECT_EQ(plan.preempted, (std::vector<size_t>{1}));
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}}));
}

TEST(Scheduler, ADecoderTakesTheBlocksOfANewerPrefill) {
  const Scheduler s({.max_running = 2, .step_tokens = 8, .block_size = 4});
  // The prefill (newer) holds 2 blocks; the decoder needs 1, none free: the prefill gives way.
  const std::vector<SequenceView> run = {running(2, 30, 8, 2), running(1, 13, 12, 3)};
  const StepPlan plan = s.plan(run, {}, 0);
  EXPECT_EQ(plan.preempted, (std::vector<size_t>{0}));
  EXPECT_EQ(chunks(plan), (Chunks{{1, 1}}));
}

TEST(Scheduler, TheNewestPrefillShrinksToWhatThePoolHolds) {
  const Scheduler s({.max_running = 2, .step_tokens = 64, .block_size = 4});
  const std::vector<SequenceView> run = {running(1, 5, 4, 2), running(2, 50, 6, 2)};
  // 1 block free: the decoder needs none (position 4 is in its second block); the prefill
  // holds positions up to 8 in its two blocks plus 4 in the free one: 6 more tokens.
  const StepPlan plan = s.plan(run, {}, 1);
  EXPECT_TRUE(plan.preempted.empty());
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}, {1, 6}}));
  // No free block and its own blocks full: it sits this step out, holding what it has.
  const std::vector<SequenceView> stuck = {running(1, 5, 4, 2), running(2, 50, 8, 2)};
  EXPECT_EQ(chunks(s.plan(stuck, {}, 0)), (Chunks{{0, 1}}));
}

// A workload played through the policy with a pretend pool: sequences arrive at random with
// random prompt and output lengths; every step the plan is applied as an engine would.
struct Simulated {
  uint64_t arrival;
  int64_t prompt, max_new, tokens, cached = 0, blocks = 0;
  int preemptions = 0;
  int64_t drafts = 0;  // asked for this step (speculative decoding)
};

// With `speculate`, each decoder asks for 0..5 draft rows a step, and a random number of the
// drafts it gets are accepted (its cache is then cut back to the kept positions).
void simulate(uint64_t seed, SchedulerLimits limits, int64_t pool_blocks, bool speculate = false) {
  const Scheduler s(limits);
  std::mt19937_64 rng(seed);
  const int64_t pool_positions = pool_blocks * limits.block_size;
  std::vector<Simulated> run, wait;
  uint64_t next_arrival = 0;
  int finished = 0, preemptions = 0;
  const int total = 120;
  int64_t free_blocks = pool_blocks;
  for (int step = 0; finished < total; ++step) {
    ASSERT_LT(step, 100000) << "no progress";
    for (int k = 0; k < 2 && next_arrival < static_cast<uint64_t>(total); ++k) {
      if (rng() % 3 != 0) continue;
      const int64_t prompt = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(pool_positions / 2));
      const int64_t max_new = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(pool_positions - prompt));
      wait.push_back({.arrival = next_arrival++, .prompt = prompt, .max_new = max_new, .tokens = prompt});
    }
    std::vector<SequenceView> rv, wv;
    for (auto& q : run) {
      q.drafts = speculate && q.tokens - q.cached == 1 ? static_cast<int64_t>(rng() % 6) : 0;
      rv.push_back({.arrival = q.arrival, .tokens = q.tokens, .cached = q.cached, .blocks = q.blocks, .drafts = q.drafts});
    }
    for (const auto& q : wait) wv.push_back({q.arrival, q.tokens, 0, 0});
    const StepPlan plan = s.plan(rv, wv, free_blocks);
    ASSERT_LE(plan.rows, limits.step_tokens);

    // Every running decoder that was not preempted has its row.
    for (size_t i = 0; i < run.size(); ++i) {
      if (run[i].tokens - run[i].cached != 1) continue;
      const bool out = std::find(plan.preempted.begin(), plan.preempted.end(), i) != plan.preempted.end();
      const bool has_row = std::any_of(plan.chunks.begin(), plan.chunks.end(), [&](auto& c) { return c.seq == i; });
      ASSERT_TRUE(out != has_row) << "step " << step;
    }
    std::vector<Simulated> all = run;
    all.insert(all.end(), wait.begin(), wait.begin() + static_cast<std::ptrdiff_t>(plan.admitted));
    for (const auto& c : plan.chunks) {
      Simulated& q = all[c.seq];
      ASSERT_GT(c.n, 0);
      ASSERT_LE(q.cached + c.n, q.tokens + q.drafts);
      if (c.n > 1) {
        ASSERT_TRUE(q.cached + c.n <= q.tokens || q.tokens - q.cached == 1);  // drafts: decoders only
      }
      const int64_t blocks = s.blocks_for(q.cached + c.n);
      free_blocks -= std::max<int64_t>(0, blocks - q.blocks);
      q.blocks = std::max(q.blocks, blocks);
      q.cached += c.n;
    }
    for (size_t i : plan.preempted) {
      free_blocks += all[i].blocks;
      all[i].blocks = all[i].cached = 0;
      ++all[i].preemptions;
      ++preemptions;
    }
    ASSERT_GE(free_blocks, 0) << "the pool was overdrawn at step " << step;
    ASSERT_TRUE(!plan.chunks.empty() || all.empty()) << "a step with work to do did nothing";

    std::vector<Simulated> next_run, requeued;
    for (size_t i = 0; i < all.size(); ++i) {
      Simulated& q = all[i];
      const bool out = std::find(plan.preempted.begin(), plan.preempted.end(), i) != plan.preempted.end();
      if (out) {
        requeued.push_back(q);
        continue;
      }
      if (q.cached >= q.tokens) {  // logits: sample a token, and keep some of the drafts
        const int64_t drafted = q.cached - q.tokens;
        const int64_t accepted = drafted > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(drafted + 1)) : 0;
        q.cached = q.tokens + accepted;
        free_blocks += q.blocks - s.blocks_for(q.cached);
        q.blocks = s.blocks_for(q.cached);
        q.tokens += 1 + accepted;
        if (q.tokens - q.prompt >= q.max_new || q.tokens > pool_positions) {
          free_blocks += q.blocks;
          ++finished;
          continue;
        }
      }
      next_run.push_back(q);
    }
    wait.erase(wait.begin(), wait.begin() + static_cast<std::ptrdiff_t>(plan.admitted));
    wait.insert(wait.end(), requeued.begin(), requeued.end());
    std::stable_sort(wait.begin(), wait.end(), [](auto& a, auto& b) { return a.arrival < b.arrival; });
    run = std::move(next_run);
  }
  EXPECT_EQ(free_blocks, pool_blocks);
  if (pool_blocks < 64) {
    EXPECT_GT(preemptions, 0);  // the small pools are tight
  }
}

// A waiting sequence whose prompt begins with cached blocks needs free blocks only for the
// rest (and for the idle cached blocks it takes from the free count), and starts past them.
TEST(Scheduler, ACachedPrefixIsAdmittedWithTheBlocksItStillNeeds) {
  const Scheduler s({.max_running = 4, .step_tokens = 64, .block_size = 16});
  SequenceView w = waiting(1, 100);  // 7 blocks in all
  EXPECT_EQ(s.plan({}, std::vector{w}, 3).admitted, 0u);
  w.cached = 80;   // 5 whole blocks attached
  w.blocks = 5;
  w.attach_cost = 1;  // one of them idle: attaching it takes a free block
  StepPlan plan = s.plan({}, std::vector{w}, 3);
  ASSERT_EQ(plan.admitted, 1u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 20}}));  // from position 80
  EXPECT_EQ(s.plan({}, std::vector{w}, 2).admitted, 0u);  // 2 new blocks + 1 idle > 2 free
  // A fully cached prompt computes its last token only.
  w.cached = 99;
  w.blocks = 7;
  w.attach_cost = 1;  // the copied last block
  plan = s.plan({}, std::vector{w}, 1);
  ASSERT_EQ(plan.admitted, 1u);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}}));
}

// A held sequence (its next blocks are being computed by another) waits, and no one behind it
// overtakes it.
TEST(Scheduler, AHeldSequenceWaitsAndKeepsItsPlaceInLine) {
  const Scheduler s({.max_running = 4, .step_tokens = 64, .block_size = 16});
  SequenceView held = waiting(1, 40);
  held.held = true;
  const StepPlan plan = s.plan({}, std::vector{held, waiting(2, 10)}, 100);
  EXPECT_EQ(plan.admitted, 0u);
  EXPECT_TRUE(plan.chunks.empty());
}

// Preempting a sequence frees only the blocks nobody else holds.
TEST(Scheduler, PreemptingASharerFreesOnlyItsOwnBlocks) {
  const Scheduler s({.max_running = 4, .step_tokens = 64, .block_size = 16});
  SequenceView newer = running(2, 65, 64, 4);
  newer.shared = 4;  // all four shared with the older one: preempting it frees nothing
  const std::vector<SequenceView> run = {running(1, 80, 64, 4), newer};
  const StepPlan plan = s.plan(run, {}, 0);
  // The older one needs a block for its chunk; the newer one gives way, but frees no block:
  // the older one gets no chunk this step either (the pool has none).
  EXPECT_EQ(plan.preempted, (std::vector<size_t>{1}));
  EXPECT_TRUE(plan.chunks.empty());
}

TEST(Scheduler, SimulatedWorkloadsFinishWithoutOverdrawingThePool) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    simulate(seed, {.max_running = 8, .step_tokens = 32, .block_size = 4}, 40);
    simulate(seed, {.max_running = 3, .step_tokens = 3, .block_size = 16}, 8);
    simulate(seed, {.max_running = 16, .step_tokens = 256, .block_size = 16}, 64);
    simulate(seed, {.max_running = 8, .step_tokens = 32, .block_size = 4}, 40, true);
    simulate(seed, {.max_running = 3, .step_tokens = 3, .block_size = 16}, 8, true);
    simulate(seed, {.max_running = 16, .step_tokens = 64, .block_size = 16}, 64, true);
  }
}

TEST(Scheduler, DraftRowsFollowTheDecodeRowsWithinTheBudgetAndTheFreeBlocks) {
  const Scheduler s({.max_running = 4, .step_tokens = 10, .block_size = 4});
  // a's decode row is position 7 and b's position 5: both in blocks they hold.
  SequenceView a = running(1, 8, 7, 2), b = running(2, 6, 5, 2);
  a.drafts = 5;
  b.drafts = 8;
  // a: 1 + 5 rows; b: its row and 3 drafts, what the budget leaves.
  StepPlan plan = s.plan(std::vector{a, b}, {}, 100);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 6}, {1, 4}}));
  EXPECT_EQ(plan.rows, 10);
  // One free block: a's drafts shrink to it (positions 8..11), b's to its own block (6, 7).
  plan = s.plan(std::vector{a, b}, {}, 1);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 5}, {1, 3}}));
  plan = s.plan(std::vector{a, b}, {}, 0);
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}, {1, 3}}));
  // Drafts come after every decode row: the newer decoder's row gets the last free block.
  SequenceView c = running(3, 9, 8, 2);  // position 8 needs a new block
  plan = s.plan(std::vector{a, c}, {}, 1);
  EXPECT_TRUE(plan.preempted.empty());
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}, {1, 1}}));
  // Drafts never preempt: a newer prefill keeps its blocks (and, with none free, waits).
  const SequenceView newer = running(3, 40, 12, 3);
  plan = s.plan(std::vector{a, newer}, {}, 0);
  EXPECT_TRUE(plan.preempted.empty());
  EXPECT_EQ(chunks(plan), (Chunks{{0, 1}}));
}

}  // namespace
}  // namespace nanoserve::engine
