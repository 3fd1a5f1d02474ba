// One request's timeline, as the lab's pages draw it: when it waited, when it was admitted,
// each forward step that computed rows for it (a prefill chunk, a decode step, a verify step,
// with the step's size: every sequence's rows share one read of the weights), when it was
// preempted, when the server wrote its answer to the connection, and when it ended.
//
// The engine records the steps (engine_trace.h keeps the timelines of recent requests); the
// server records its writes through the request's Stream. Times are milliseconds since the
// request was submitted.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nanoserve::engine {

struct TimelineEvent {
  enum class Kind {
    Queued,     // submitted -> admitted (or preempted -> admitted again)
    Prefill,    // a chunk of its prompt
    Recompute,  // a chunk of its tokens again, after it was preempted
    Decode,     // one row: its next token
    Verify,     // its next token and draft tokens (speculative decoding)
    Preempted,  // gave its KV blocks back; it waits to be recomputed
    Write,      // the server wrote text of it to the connection
    Finished,   // its final event
  };
  Kind kind = Kind::Queued;
  double start_ms = 0, end_ms = 0;
  int64_t step = -1;            // the engine's step number (steps only)
  int64_t tokens = 0;           // rows it fed (steps), bytes written (Write), cached prompt tokens (Queued)
  int64_t accepted = 0;         // Verify: draft tokens accepted
  int64_t batch_rows = 0;       // steps: rows of the whole step
  int64_t batch_sequences = 0;  // steps: sequences the step advanced
};

const char* timeline_kind_name(TimelineEvent::Kind kind);

// Written by the engine's thread and the server's, read by any: every member locks.
class RequestTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  // Events kept per request: a long answer's decode steps beyond it are counted, not kept.
  static constexpr size_t kMaxEvents = 4096;

  RequestTimeline(std::string id, Clock::time_point submitted);

  const std::string& id() const { return id_; }
  Clock::time_point submitted() const { return submitted_; }
  double ms_since_submit(Clock::time_point t) const;

  void add(TimelineEvent event);
  // An event of no duration (preempted, finished) at `at`.
  void mark(TimelineEvent::Kind kind, Clock::time_point at = Clock::now());
  // The server wrote `bytes` of the answer between `start` and `end`.
  void add_write(Clock::time_point start, Clock::time_point end, int64_t bytes);

  struct Snapshot {
    std::string id;
    int64_t submitted_unix_ms = 0;  // wall clock, to order requests from different processes
    std::vector<TimelineEvent> events;
    int64_t dropped = 0;            // events past kMaxEvents
    bool finished = false;
  };
  Snapshot snapshot() const;

 private:
  const std::string id_;
  const Clock::time_point submitted_;
  const int64_t submitted_unix_ms_;
  mutable std::mutex mutex_;
  std::vector<TimelineEvent> events_;
  int64_t dropped_ = 0;
  bool finished_ = false;
};

}  // namespace nanoserve::engine
