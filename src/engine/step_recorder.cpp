#include "engine/step_recorder.h"

#include <algorithm>
#include <cstddef>

namespace nanoserve::engine {

StepRecorder::StepRecorder(EngineTrace& trace, const model::KvCache& pool)
    : trace_(trace),
      pool_(pool),
      batch_sequences_{.bounds = batch_size_bounds(), .counts = std::vector<uint64_t>(batch_size_bounds().size() + 1),
                       .sum = 0} {}

const std::vector<int64_t>& StepRecorder::batch_size_bounds() {
  static const std::vector<int64_t> bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  return bounds;
}

// A chunk that starts in the prompt is prefill (recompute, after a preemption), one that starts
// before the last token recomputes generated tokens, one that runs past it verifies drafts.
TimelineEvent StepRecorder::step_event(int64_t cached, int64_t n, int64_t n_tokens, int64_t prompt_tokens,
                                       bool preempted_before) {
  using Kind = TimelineEvent::Kind;
  Kind kind = Kind::Decode;
  if (cached < prompt_tokens)
    kind = preempted_before ? Kind::Recompute : Kind::Prefill;
  else if (cached < n_tokens - 1)
    kind = Kind::Recompute;
  else if (cached + n > n_tokens)
    kind = Kind::Verify;
  return {.kind = kind, .start_ms = 0, .end_ms = 0, .step = -1, .tokens = n, .accepted = 0, .batch_rows = 0,
          .batch_sequences = 0};
}

void StepRecorder::begin_step() { watched_ = trace_.watched(); }

void StepRecorder::record_step(std::span<RequestTimeline* const> timelines, std::span<TimelineEvent> events,
                               int64_t rows, TimePoint started, TimePoint ended) {
  StepRecord record{.step = steps_, .start_ms = trace_.ms_since_start(started),
                    .duration_ms = std::chrono::duration<double, std::milli>(ended - started).count(),
                    .rows = rows, .prefill_rows = 0, .draft_rows = 0,
                    .sequences = static_cast<int64_t>(timelines.size())};
  for (size_t i = 0; i < timelines.size(); ++i) {
    TimelineEvent& event = events[i];
    RequestTimeline& timeline = *timelines[i];
    event.start_ms = timeline.ms_since_submit(started);
    event.end_ms = timeline.ms_since_submit(ended);
    event.step = steps_;
    event.batch_rows = record.rows;
    event.batch_sequences = record.sequences;
    timeline.add(event);
    if (event.kind == TimelineEvent::Kind::Prefill || event.kind == TimelineEvent::Kind::Recompute)
      record.prefill_rows += event.tokens;
    if (event.kind == TimelineEvent::Kind::Verify) record.draft_rows += event.tokens - 1;
  }
  ++steps_;
  if (watched_) pending_steps_.push_back(record);  // trimmed to kMaxSteps when a snapshot takes them
}

void StepRecorder::count_batch(int64_t sequences) {
  std::lock_guard lock(histogram_mutex_);
  const auto& b = batch_sequences_.bounds;
  ++batch_sequences_.counts[static_cast<size_t>(std::lower_bound(b.begin(), b.end(), sequences) - b.begin())];
  batch_sequences_.sum += sequences;
}

void StepRecorder::count_choice(int64_t chosen, int64_t drafted, int64_t accepted) {
  ++decode_steps_;
  generated_tokens_ += static_cast<uint64_t>(chosen);
  if (drafted > 0) {
    ++verify_steps_;
    draft_tokens_ += static_cast<uint64_t>(drafted);
    accepted_tokens_ += static_cast<uint64_t>(accepted);
  }
}

void StepRecorder::count_preemption(const std::string& id) {
  ++preemptions_;
  if (watched_) pending_preempted_.push_back(id);
}

bool StepRecorder::snapshot_due(bool preempted, bool idle) {
  if (!watched_) {
    pending_steps_.clear();
    pending_preempted_.clear();
    return false;
  }
  const bool due = std::chrono::steady_clock::now() - last_snapshot_ >= EngineTrace::kSnapshotInterval;
  return preempted || due || (idle && !idle_published_);
}

void StepRecorder::snapshot(std::vector<SequenceState> sequences, std::span<const int> running_slots, bool idle) {
  const auto now = std::chrono::steady_clock::now();
  if (pending_steps_.size() > EngineTrace::kMaxSteps)
    pending_steps_.erase(pending_steps_.begin(),
                         pending_steps_.end() - static_cast<std::ptrdiff_t>(EngineTrace::kMaxSteps));
  EngineSnapshot snapshot{.time_ms = trace_.ms_since_start(now), .steps = steps_,
                          .recent_steps = std::move(pending_steps_), .sequences = std::move(sequences),
                          .block_size = pool_.block_size(), .total_blocks = pool_.n_blocks(),
                          .free_blocks = pool_.free_blocks(), .cached_blocks = {}, .shared_blocks = {},
                          .preemptions = preemptions_, .preempted = std::move(pending_preempted_)};
  std::vector<int32_t> shared;
  for (const int slot : running_slots)
    for (const int32_t b : pool_.block_table(slot))
      if (pool_.holders(b) > 1) shared.push_back(b);
  std::sort(shared.begin(), shared.end());
  shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
  snapshot.shared_blocks = block_runs(shared);
  std::vector<int32_t> idle_blocks = pool_.idle_blocks();
  std::sort(idle_blocks.begin(), idle_blocks.end());
  snapshot.cached_blocks = block_runs(idle_blocks);
  trace_.publish(std::move(snapshot));
  pending_steps_.clear();
  pending_preempted_.clear();
  last_snapshot_ = now;
  idle_published_ = idle;
}

void StepRecorder::set_gauges(int64_t running, uint64_t evictions) {
  running_ = running;
  used_blocks_ = pool_.used_blocks();
  cached_blocks_ = pool_.cached_blocks();
  evictions_ = evictions;
}

void StepRecorder::fill(EngineMetrics& m) const {
  m.running = running_;
  m.kv_used_blocks = used_blocks_;
  m.kv_cached_blocks = cached_blocks_;
  m.prefix_evictions = evictions_;
  m.preemptions = preemptions_;
  m.decode_steps = decode_steps_;
  m.generated_tokens = generated_tokens_;
  m.verify_steps = verify_steps_;
  m.draft_tokens = draft_tokens_;
  m.accepted_tokens = accepted_tokens_;
  std::lock_guard lock(histogram_mutex_);
  m.batch_sequences = batch_sequences_;
}

}  // namespace nanoserve::engine
