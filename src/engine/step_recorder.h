// What the batch engine tells of its steps: each sequence's part of a step on its timeline, the
// step in the trace's recent steps, snapshots of the pool while someone watches (engine_trace.h),
// and the counters, gauges and batch-size histogram that metrics() reads from any thread.
// Everything but metrics() runs on the scheduler's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_trace.h"
#include "model/kv_cache.h"

namespace nanoserve::engine {

class StepRecorder {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  StepRecorder(EngineTrace& trace, const model::KvCache& pool);

  // A sequence's part of a step: a chunk of n rows from position `cached` of its n_tokens (past
  // them: draft tokens), as its timeline names it.
  static TimelineEvent step_event(int64_t cached, int64_t n, int64_t n_tokens, int64_t prompt_tokens,
                                  bool preempted_before);
  static const std::vector<int64_t>& batch_size_bounds();  // sequences advanced per step

  void begin_step();  // reads once a step whether someone watches
  // A forward step of `rows` rows over these sequences (their timelines and events, in order).
  void record_step(std::span<RequestTimeline* const> timelines, std::span<TimelineEvent> events, int64_t rows,
                   TimePoint started, TimePoint ended);
  void count_batch(int64_t sequences);
  // A sequence's step that chose `chosen` tokens after checking `drafted` draft tokens.
  void count_choice(int64_t chosen, int64_t drafted, int64_t accepted);
  void count_preemption(const std::string& id);

  // After a step: whether a snapshot is due (a preemption, the interval, or the engine gone idle),
  // and then the snapshot of these sequences (running first) and slots.
  bool snapshot_due(bool preempted, bool idle);
  void snapshot(std::vector<SequenceState> sequences, std::span<const int> running_slots, bool idle);

  // Gauges of the pool and the running sequences, refreshed by the scheduler thread.
  void set_gauges(int64_t running, uint64_t evictions);
  void fill(EngineMetrics& m) const;  // any thread

 private:
  EngineTrace& trace_;
  const model::KvCache& pool_;
  int64_t steps_ = 0;
  bool watched_ = false;
  std::vector<StepRecord> pending_steps_;  // since the last snapshot
  std::vector<std::string> pending_preempted_;
  TimePoint last_snapshot_;
  bool idle_published_ = false;

  std::atomic<int64_t> running_ = 0, used_blocks_ = 0, cached_blocks_ = 0;
  std::atomic<uint64_t> preemptions_ = 0, evictions_ = 0;
  std::atomic<uint64_t> decode_steps_ = 0, generated_tokens_ = 0, verify_steps_ = 0, draft_tokens_ = 0,
                        accepted_tokens_ = 0;
  mutable std::mutex histogram_mutex_;
  CountHistogram batch_sequences_;
};

}  // namespace nanoserve::engine
