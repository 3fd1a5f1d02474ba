// The engine's trace (engine/engine_trace.h) as the JSON that GET /v1/timelines and the event
// stream GET /v1/engine/events send; web/lab/ draws it.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/engine_trace.h"

namespace nanoserve::server {

// {"id", "submitted_unix_ms", "finished", "dropped_events", "events": [{"kind", "start_ms",
// "end_ms", and by kind: "step", "tokens", "accepted", "batch_rows", "batch_sequences",
// "cached_tokens", "bytes"}]}
nlohmann::ordered_json timeline_json(const engine::RequestTimeline::Snapshot& timeline);
// {"time_ms", "steps", "recent_steps": [...], "sequences": [{"id", "running", "prompt_tokens",
// "tokens", "cached", "preemptions", "blocks": [[first, count], ...]}], "block_size", "total_blocks",
// "free_blocks", "cached_blocks": runs, "shared_blocks": runs, "preemptions", "preempted": [ids]}
nlohmann::ordered_json snapshot_json(const engine::EngineSnapshot& snapshot);

}  // namespace nanoserve::server
