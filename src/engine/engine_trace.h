// What an engine shows of itself while it works, for the lab's pages (GET /v1/timelines, the
// event stream GET /v1/engine/events): the timelines of recent requests (timeline.h), and
// snapshots of the batch engine's state after its steps: the sequences running and waiting,
// each one's KV blocks in the paged pool, the blocks that the prefix cache keeps or that
// sequences share, the steps since the last snapshot with their sizes, and preemptions.
//
// Snapshots are made only while someone watches (subscribe()), at most every
// kSnapshotInterval, and at once after a step that preempted or when the engine goes idle, so
// that a page never misses a preemption. A watcher that does not keep up loses its oldest
// snapshots, whose preemptions and steps are carried into the next one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/timeline.h"

namespace nanoserve::engine {

// Consecutive block ids [first, first + count).
struct BlockRun {
  int32_t first = 0;
  int32_t count = 0;
};
// Block ids in the given order as runs of consecutive ids.
std::vector<BlockRun> block_runs(std::span<const int32_t> blocks);

struct SequenceState {
  std::string id;
  bool running = false;        // holds a slot and blocks (else it waits: new, or preempted)
  int64_t prompt_tokens = 0;
  int64_t tokens = 0;          // prompt and generated
  int64_t cached = 0;          // of those, positions in the KV cache
  int64_t preemptions = 0;     // times it was preempted so far
  std::vector<BlockRun> blocks;  // its block table
};

struct StepRecord {
  int64_t step = 0;
  double start_ms = 0;      // since the trace began
  double duration_ms = 0;
  int64_t rows = 0;         // every row of the step
  int64_t prefill_rows = 0; // of those, prompt (or recomputed) tokens before a sequence's last
  int64_t draft_rows = 0;   // draft tokens checked
  int64_t sequences = 0;    // sequences it advanced
};

struct EngineSnapshot {
  double time_ms = 0;       // since the trace began
  int64_t steps = 0;        // steps so far
  std::vector<StepRecord> recent_steps;  // since the previous snapshot, oldest first (the last kMaxSteps)
  std::vector<SequenceState> sequences;  // running, then waiting, each oldest first
  int64_t block_size = 0;
  int64_t total_blocks = 0;
  int64_t free_blocks = 0;             // never used, or cached and idle
  std::vector<BlockRun> cached_blocks; // idle blocks the prefix cache keeps (a new prefix may reuse them)
  std::vector<BlockRun> shared_blocks; // blocks two or more sequences hold (a shared prefix)
  uint64_t preemptions = 0;            // so far
  std::vector<std::string> preempted;  // ids preempted since the previous snapshot
};

class TraceSubscription {
 public:
  static constexpr size_t kMaxQueued = 32;

  // The next snapshot, waiting up to `timeout`; nullopt on timeout or once closed.
  std::optional<EngineSnapshot> next(std::chrono::milliseconds timeout);
  bool closed() const;

 private:
  friend class EngineTrace;
  void push(const EngineSnapshot& snapshot);
  void close();

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<EngineSnapshot> queued_;
  bool closed_ = false;
};

class EngineTrace {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kKeptTimelines = 64;  // the most recent requests' timelines
  static constexpr size_t kMaxSteps = 256;      // steps per snapshot
  static constexpr std::chrono::milliseconds kSnapshotInterval{50};

  EngineTrace();
  ~EngineTrace();  // closes every subscription

  // A new request's timeline, kept among the recent ones.
  std::shared_ptr<RequestTimeline> open(const std::string& id, Clock::time_point submitted);
  // The kept timelines of a request id (several for n > 1 choices), in submit order.
  std::vector<std::shared_ptr<const RequestTimeline>> find(const std::string& id) const;
  // The `n` most recent timelines, newest first.
  std::vector<std::shared_ptr<const RequestTimeline>> recent(size_t n) const;

  // A watcher of snapshots; its first is the latest made (if any). nullptr when `max_watchers`
  // already watch.
  std::shared_ptr<TraceSubscription> subscribe(size_t max_watchers);
  bool watched() const;
  double ms_since_start(Clock::time_point t) const;
  // Sends a snapshot to every watcher (the engine calls it only while watched()).
  void publish(EngineSnapshot snapshot);

 private:
  const Clock::time_point start_ = Clock::now();
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<RequestTimeline>> timelines_;
  std::vector<std::weak_ptr<TraceSubscription>> watchers_;
  std::optional<EngineSnapshot> last_;
};

}  // namespace nanoserve::engine
