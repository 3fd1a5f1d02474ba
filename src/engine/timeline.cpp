#include "engine/timeline.h"

#include <utility>

namespace nanoserve::engine {

const char* timeline_kind_name(TimelineEvent::Kind kind) {
  switch (kind) {
    case TimelineEvent::Kind::Queued: return "queued";
    case TimelineEvent::Kind::Prefill: return "prefill";
    case TimelineEvent::Kind::Recompute: return "recompute";
    case TimelineEvent::Kind::Decode: return "decode";
    case TimelineEvent::Kind::Verify: return "verify";
    case TimelineEvent::Kind::Preempted: return "preempted";
    case TimelineEvent::Kind::Write: return "write";
    case TimelineEvent::Kind::Finished: return "finished";
  }
  return "unknown";
}

namespace {

// The wall clock at `t` of the steady clock (ordering only: the two clocks may drift apart).
int64_t unix_ms_at(RequestTimeline::Clock::time_point t) {
  const auto now_steady = RequestTimeline::Clock::now();
  const auto now_wall = std::chrono::system_clock::now();
  const auto wall = now_wall - std::chrono::duration_cast<std::chrono::system_clock::duration>(now_steady - t);
  return std::chrono::duration_cast<std::chrono::milliseconds>(wall.time_since_epoch()).count();
}

}  // namespace

RequestTimeline::RequestTimeline(std::string id, Clock::time_point submitted)
    : id_(std::move(id)), submitted_(submitted), submitted_unix_ms_(unix_ms_at(submitted)) {}

double RequestTimeline::ms_since_submit(Clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(t - submitted_).count();
}

void RequestTimeline::add(TimelineEvent event) {
  std::lock_guard lock(mutex_);
  if (event.kind == TimelineEvent::Kind::Finished) finished_ = true;
  // The last places are kept for the end, so that a long answer's timeline still says how it ended.
  const bool room = events_.size() + 1 < kMaxEvents || (event.kind == TimelineEvent::Kind::Finished &&
                                                        events_.size() < kMaxEvents);
  if (!room) {
    ++dropped_;
    return;
  }
  events_.push_back(event);
}

void RequestTimeline::mark(TimelineEvent::Kind kind, Clock::time_point at) {
  const double ms = ms_since_submit(at);
  add({.kind = kind, .start_ms = ms, .end_ms = ms});
}

void RequestTimeline::add_write(Clock::time_point start, Clock::time_point end, int64_t bytes) {
  add({.kind = TimelineEvent::Kind::Write, .start_ms = ms_since_submit(start), .end_ms = ms_since_submit(end),
       .tokens = bytes});
}

RequestTimeline::Snapshot RequestTimeline::snapshot() const {
  std::lock_guard lock(mutex_);
  return {.id = id_, .submitted_unix_ms = submitted_unix_ms_, .events = events_, .dropped = dropped_,
          .finished = finished_};
}

}  // namespace nanoserve::engine
