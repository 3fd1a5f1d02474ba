// What the lab's pages are drawn from (engine/engine_trace.h, engine/timeline.h): the batch
// engine records each request's timeline (queued, prefill chunks, decode steps with the step's
// size, preemptions and recomputes, the end) and, while watched, snapshots of its sequences and
// their KV blocks in which no preemption is missed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/batch_engine.h"
#include "engine/engine_trace.h"
#include "engine/stream_reading.h"

namespace nanoserve::engine {
namespace {

using namespace std::chrono_literals;
using Kind = TimelineEvent::Kind;

// "r7" (built by append: GCC 12 warns falsely of overlapping copies in "r" + std::to_string(i)).
std::string numbered(const char* prefix, size_t i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

TEST(BlockRuns, ConsecutiveIdsBecomeOneRun) {
  const std::vector<int32_t> blocks = {3, 4, 5, 9, 1, 2};
  const std::vector<BlockRun> runs = block_runs(blocks);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].first, 3);
  EXPECT_EQ(runs[0].count, 3);
  EXPECT_EQ(runs[1].first, 9);
  EXPECT_EQ(runs[2].first, 1);
  EXPECT_EQ(runs[2].count, 2);
  EXPECT_TRUE(block_runs({}).empty());
}

TEST(RequestTimeline, KeepsItsEndWhenALongAnswerFillsIt) {
  RequestTimeline timeline("r", RequestTimeline::Clock::now());
  for (size_t i = 0; i < RequestTimeline::kMaxEvents + 10; ++i) timeline.add({.kind = Kind::Decode});
  timeline.add({.kind = Kind::Finished});
  const RequestTimeline::Snapshot s = timeline.snapshot();
  EXPECT_EQ(s.events.size(), RequestTimeline::kMaxEvents);
  EXPECT_EQ(s.events.back().kind, Kind::Finished);
  EXPECT_EQ(s.dropped, 11);
  EXPECT_TRUE(s.finished);
}

TEST(EngineTrace, KeepsTheMostRecentTimelinesAndFindsEveryChoiceOfAnId) {
  EngineTrace trace;
  const auto now = EngineTrace::Clock::now();
  trace.open("twice", now);
  trace.open("twice", now);
  EXPECT_EQ(trace.find("twice").size(), 2u);
  for (size_t i = 0; i < EngineTrace::kKeptTimelines; ++i) trace.open(numbered("r", i), now);
  EXPECT_TRUE(trace.find("twice").empty());
  const auto recent = trace.recent(3);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0]->id(), numbered("r", EngineTrace::kKeptTimelines - 1));
}

TEST(EngineTrace, AWatcherThatFallsBehindStillHearsOfEveryPreemption) {
  EngineTrace trace;
  EXPECT_FALSE(trace.watched());
  const auto watcher = trace.subscribe(1);
  ASSERT_NE(watcher, nullptr);
  EXPECT_TRUE(trace.watched());
  EXPECT_EQ(trace.subscribe(1), nullptr);  // one watcher at most here
  const auto snapshot = [](int64_t steps, std::string preempted) {
    EngineSnapshot s;
    s.steps = steps;
    s.preempted = {std::move(preempted)};
    return s;
  };
  for (size_t i = 0; i < TraceSubscription::kMaxQueued + 5; ++i)
    trace.publish(snapshot(static_cast<int64_t>(i), numbered("p", i)));
  std::vector<std::string> heard;
  int64_t last_steps = -1;
  while (const auto s = watcher->next(0ms)) {
    heard.insert(heard.end(), s->preempted.begin(), s->preempted.end());
    last_steps = s->steps;
  }
  EXPECT_EQ(heard.size(), TraceSubscription::kMaxQueued + 5);
  EXPECT_EQ(last_steps, static_cast<int64_t>(TraceSubscription::kMaxQueued + 4));
  // A later watcher starts from the latest snapshot, without its news.
  const auto later = std::make_shared<EngineTrace>();
  later->publish(snapshot(7, "x"));
  const auto second = later->subscribe(1);
  const auto first = second->next(0ms);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->steps, 7);
  EXPECT_TRUE(first->preempted.empty());
}

// Eight requests through a pool of 24 blocks: every timeline starts queued, prefills, decodes in
// steps numbered in order whose size it shares, and ends; the preempted ones wait again and
// recompute. The snapshots a watcher receives name each preemption, and every block they say a
// sequence holds is one the pool counts as used.
TEST(BatchEngineTrace, TimelinesAndSnapshotsTellPreemptionsAndBlocks) {
  BatchOptions options{.model_path = test::tiny_model_path(), .threads = 1, .parallel = 8, .step_tokens = 64};
  BatchEngine probe(options);
  const int64_t block_bytes = probe.metrics().kv_total_bytes / probe.metrics().kv_total_blocks;
  options.kv_memory_bytes = 24 * block_bytes;
  options.spec = SpecMode::Off;
  BatchEngine engine(options);
  ASSERT_NE(engine.trace(), nullptr);
  const auto watcher = engine.trace()->subscribe(1);

  std::vector<EngineSnapshot> snapshots;
  std::atomic<bool> done = false;
  std::thread reader([&] {
    while (!done)
      if (auto s = watcher->next(20ms)) snapshots.push_back(std::move(*s));
    while (auto s = watcher->next(0ms)) snapshots.push_back(std::move(*s));
  });
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 8; ++i) {
    GenerationRequest r = test::request(std::vector<int32_t>(20 + 10 * i, 65 + i), 60);
    r.id = numbered("req-", i);
    requests.push_back(r);
  }
  for (const test::StreamRecord& record : test::run_together(engine, requests))
    ASSERT_EQ(record.last.kind, Event::Kind::Done) << record.last.error;
  std::this_thread::sleep_for(100ms);  // the idle snapshot
  done = true;
  reader.join();
  ASSERT_GT(engine.metrics().preemptions, 0u);

  int preempted_timelines = 0;
  for (const GenerationRequest& r : requests) {
    const auto found = engine.trace()->find(r.id);
    ASSERT_EQ(found.size(), 1u) << r.id;
    const RequestTimeline::Snapshot t = found[0]->snapshot();
    ASSERT_GE(t.events.size(), 3u);
    EXPECT_EQ(t.events.front().kind, Kind::Queued) << r.id;
    EXPECT_EQ(t.events.back().kind, Kind::Finished) << r.id;
    EXPECT_TRUE(t.finished);
    int64_t last_step = -1, decodes = 0, fed = 0;
    bool preempted = false, recomputed_after = false;
    for (const TimelineEvent& e : t.events) {
      EXPECT_LE(e.start_ms, e.end_ms);
      if (e.kind == Kind::Preempted) preempted = true;
      if (e.kind == Kind::Recompute) recomputed_after = preempted;
      if (e.step < 0) continue;
      EXPECT_GT(e.step, last_step) << r.id;
      last_step = e.step;
      EXPECT_GE(e.batch_sequences, 1);
      EXPECT_GE(e.batch_rows, e.tokens);
      fed += e.tokens;
      decodes += e.kind == Kind::Decode ? 1 : 0;
    }
    if (preempted) {  // its rows computed before are fed again
      ++preempted_timelines;
      EXPECT_TRUE(recomputed_after) << r.id;
      EXPECT_GE(fed, static_cast<int64_t>(r.prompt.size()) + 59) << r.id;
    } else {  // the first of 60 tokens comes from the prompt's last chunk, then 59 decode steps
      EXPECT_EQ(decodes, 59) << r.id;
      EXPECT_EQ(fed, static_cast<int64_t>(r.prompt.size()) + 59) << r.id;
    }
  }
  EXPECT_GT(preempted_timelines, 0);

  std::set<std::string> heard;
  for (const EngineSnapshot& s : snapshots) {
    heard.insert(s.preempted.begin(), s.preempted.end());
    EXPECT_EQ(s.total_blocks, 24);
    std::set<int32_t> distinct;
    for (const SequenceState& q : s.sequences)
      for (const BlockRun& run : q.blocks)
        for (int32_t b = run.first; b < run.first + run.count; ++b) distinct.insert(b);
    EXPECT_EQ(static_cast<int64_t>(distinct.size()), s.total_blocks - s.free_blocks);
  }
  std::set<std::string> preempted_ids;
  for (const GenerationRequest& r : requests)
    for (const TimelineEvent& e : engine.trace()->find(r.id)[0]->snapshot().events)
      if (e.kind == Kind::Preempted) preempted_ids.insert(r.id);
  EXPECT_EQ(heard, preempted_ids);
  ASSERT_FALSE(snapshots.empty());
  EXPECT_TRUE(snapshots.back().sequences.empty());  // idle at the end
  int64_t steps_heard = 0;
  for (const EngineSnapshot& s : snapshots) steps_heard += static_cast<int64_t>(s.recent_steps.size());
  // Steps past kMaxSteps between two snapshots are not sent (a fast tiny model runs hundreds).
  EXPECT_GT(steps_heard, 0);
  EXPECT_LE(steps_heard, snapshots.back().steps);
}

}  // namespace
}  // namespace nanoserve::engine
