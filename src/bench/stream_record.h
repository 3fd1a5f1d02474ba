// What one streamed generation looked like from the client's side: when each piece of text
// arrived, how it ended, and the engine's own clock for it when the server reports one
// (nanoserve's `nanoserve` object). The HTTP client and the in-process arm both fill it, so
// every figure downstream is computed one way.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nanoserve::bench {

using Clock = std::chrono::steady_clock;

// The engine's clock for one request (see engine::RequestStats); absent figures stay empty.
struct EngineClock {
  std::optional<double> queue_ms;       // submitted -> admitted
  std::optional<double> ttft_ms;        // submitted -> first token (queue included)
  std::optional<double> prefill_tok_s;  // prompt tokens / (admitted -> first token)
  std::optional<double> decode_tok_s;   // (completion tokens - 1) / (first -> last token)
  std::optional<int64_t> peak_memory_bytes;  // the engine process's peak RSS
  // Speculative decoding: forward steps that gave the request tokens, draft tokens checked and
  // accepted, and by position in a draft (see engine::RequestStats).
  std::optional<int64_t> decode_steps, draft_tokens, accepted_tokens;
  std::vector<int64_t> drafted_at, accepted_at;
};

struct StreamRecord {
  Clock::time_point sent{};         // just before the request left
  std::vector<int64_t> chunk_us;    // arrival of each event carrying text, µs after `sent`
  int64_t end_us = -1;              // end of the stream ([DONE], or the engine's final event)
  int http_status = 0;              // 0: no HTTP response (or in-process)
  std::string error;                // empty when the generation completed
  std::string finish_reason;        // "length", "stop", ...
  size_t text_bytes = 0;
  std::optional<int64_t> prompt_tokens;      // usage, when reported
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;      // usage.prompt_tokens_details.cached_tokens, when reported
  std::optional<EngineClock> engine;

  bool ok() const { return error.empty(); }
};

}  // namespace nanoserve::bench
