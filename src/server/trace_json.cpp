#include "server/trace_json.h"

#include <cmath>

namespace nanoserve::server {
namespace {

using Kind = engine::TimelineEvent::Kind;

// Milliseconds to the microsecond: the pages need no more, and the JSON stays short.
double ms(double value) { return std::round(value * 1000.0) / 1000.0; }

nlohmann::ordered_json event_json(const engine::TimelineEvent& e) {
  nlohmann::ordered_json j = {{"kind", engine::timeline_kind_name(e.kind)}, {"start_ms", ms(e.start_ms)},
                              {"end_ms", ms(e.end_ms)}};
  switch (e.kind) {
    case Kind::Prefill:
    case Kind::Recompute:
    case Kind::Decode:
    case Kind::Verify:
      j["step"] = e.step;
      j["tokens"] = e.tokens;
      if (e.kind == Kind::Verify) j["accepted"] = e.accepted;
      j["batch_rows"] = e.batch_rows;
      j["batch_sequences"] = e.batch_sequences;
      break;
    case Kind::Queued:
      j["cached_tokens"] = e.tokens;
      break;
    case Kind::Write:
      j["bytes"] = e.tokens;
      break;
    case Kind::Preempted:
    case Kind::Finished:
      break;
  }
  return j;
}

nlohmann::ordered_json runs_json(const std::vector<engine::BlockRun>& runs) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const engine::BlockRun& r : runs) j.push_back({r.first, r.count});
  return j;
}

}  // namespace

nlohmann::ordered_json timeline_json(const engine::RequestTimeline::Snapshot& timeline) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const engine::TimelineEvent& e : timeline.events) events.push_back(event_json(e));
  return {{"id", timeline.id},
          {"submitted_unix_ms", timeline.submitted_unix_ms},
          {"finished", timeline.finished},
          {"dropped_events", timeline.dropped},
          {"events", std::move(events)}};
}

nlohmann::ordered_json snapshot_json(const engine::EngineSnapshot& s) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const engine::StepRecord& r : s.recent_steps)
    steps.push_back({{"step", r.step}, {"start_ms", ms(r.start_ms)}, {"duration_ms", ms(r.duration_ms)},
                     {"rows", r.rows}, {"prefill_rows", r.prefill_rows}, {"draft_rows", r.draft_rows},
                     {"sequences", r.sequences}});
  nlohmann::ordered_json sequences = nlohmann::ordered_json::array();
  for (const engine::SequenceState& q : s.sequences)
    sequences.push_back({{"id", q.id}, {"running", q.running}, {"prompt_tokens", q.prompt_tokens},
                         {"tokens", q.tokens}, {"cached", q.cached}, {"preemptions", q.preemptions},
                         {"blocks", runs_json(q.blocks)}});
  return {{"time_ms", ms(s.time_ms)},
          {"steps", s.steps},
          {"recent_steps", std::move(steps)},
          {"sequences", std::move(sequences)},
          {"block_size", s.block_size},
          {"total_blocks", s.total_blocks},
          {"free_blocks", s.free_blocks},
          {"cached_blocks", runs_json(s.cached_blocks)},
          {"shared_blocks", runs_json(s.shared_blocks)},
          {"preemptions", s.preemptions},
          {"preempted", s.preempted}};
}

}  // namespace nanoserve::server
