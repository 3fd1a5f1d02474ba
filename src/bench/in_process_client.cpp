#include "bench/in_process_client.h"

#include <exception>

namespace nanoserve::bench {
namespace {

EngineClock engine_clock(const engine::RequestStats& s) {
  return {.queue_ms = s.queue_ms, .ttft_ms = s.ttft_ms, .prefill_tok_s = s.prefill_tok_s,
          .decode_tok_s = s.decode_tok_s, .peak_memory_bytes = s.peak_memory_bytes,
          .decode_steps = s.decode_steps, .draft_tokens = s.draft_tokens, .accepted_tokens = s.accepted_tokens,
          .drafted_at = s.drafted_at, .accepted_at = s.accepted_at};
}

int64_t us_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

}  // namespace

StreamRecord run_in_process(engine::Engine& engine, const BenchRequest& request, const std::string& id,
                            std::chrono::seconds timeout, const std::atomic<bool>* stop) {
  StreamRecord record;
  engine::GenerationRequest submitted = engine_request(request, id);
  record.sent = Clock::now();
  std::shared_ptr<engine::Stream> stream;
  try {
    stream = engine.submit(std::move(submitted));
  } catch (const std::exception& e) {
    record.error = std::string("the engine refused the request: ") + e.what();
    record.end_us = us_since(record.sent);
    return record;
  }
  auto last_event = Clock::now();
  for (;;) {
    std::optional<engine::Event> event = stream->next(std::chrono::milliseconds(100));
    if (!event) {
      const bool stopped = stop && stop->load();
      if (stopped || Clock::now() - last_event > timeout) {
        stream->cancel();
        record.error = stopped ? "interrupted" : "the engine sent nothing for " + std::to_string(timeout.count()) + " s";
        break;
      }
      continue;
    }
    last_event = Clock::now();
    if (event->kind == engine::Event::Kind::Text) {
      if (!event->text.empty()) {
        record.chunk_us.push_back(us_since(record.sent));
        record.text_bytes += event->text.size();
      }
      continue;
    }
    if (event->kind == engine::Event::Kind::Error) {
      record.error = "the engine failed: " + event->error;
    } else {
      record.finish_reason = engine::finish_reason_name(event->finish);
      record.prompt_tokens = event->stats.prompt_tokens;
      record.completion_tokens = event->stats.completion_tokens;
      record.cached_tokens = event->stats.cached_tokens;
      record.engine = engine_clock(event->stats);
    }
    break;
  }
  record.end_us = us_since(record.sent);
  return record;
}

}  // namespace nanoserve::bench
